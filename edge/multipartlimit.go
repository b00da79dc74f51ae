package edge

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/graph"
)

// The operations of a multipart request (the GraphQL multipart request
// spec: an "operations" part, a "map" part, then the files) are checked
// like a JSON body before gqlgen's transport decodes them: the parts before
// the first file are read, at most lim.MaxBodyBytes of them, the operations
// part must pass scanRequest (variables within lim.MaxVariablesBytes: the
// files are outside it) and the map part must be at most maxMapBytes. The
// bytes read are then handed to the transport unchanged, followed by the
// rest of the body.

// maxMapBytes bounds the map part (file keys to variable paths).
const maxMapBytes = 64 << 10

// checkMultipart reads and checks the head of a multipart body; false when
// the request has been answered.
func checkMultipart(w http.ResponseWriter, r *http.Request, lim Limits) bool {
	_, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	boundary := params["boundary"]
	if err != nil || boundary == "" || r.ContentLength > MaxUploadBytes {
		return true // the transport refuses it
	}
	if r.ContentLength < 0 {
		// gqlgen's transport reads the files of a body of unknown length
		// into memory (it spools only when the length is known to be over
		// 8 MiB): such a body keeps the old bound.
		r.Body = http.MaxBytesReader(w, r.Body, MaxChunkedUploadBytes)
	}
	br := bufio.NewReaderSize(r.Body, 32<<10)
	head, err := readPartsHead(br, []byte("--"+boundary), 3, lim.MaxBodyBytes)
	if err != nil {
		var tooLarge *http.MaxBytesError
		switch {
		case errors.Is(err, errHeadTooLarge):
			writeCodedError(w, http.StatusRequestEntityTooLarge, core.CodeBadInput,
				"the operations and map parts of the multipart request are larger than "+graph.ByteSize(lim.MaxBodyBytes)+", the limit of a JSON request")
			return false
		case errors.As(err, &tooLarge):
			return true // the transport answers
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			r.Body = readCloser{io.MultiReader(bytes.NewReader(head), br), r.Body}
			return true // a short body: the transport says what is missing
		default:
			return true
		}
	}
	// head holds the two first parts and the start of the third delimiter:
	// parse it as a complete body.
	mr := multipart.NewReader(io.MultiReader(bytes.NewReader(head), bytes.NewReader([]byte("--\r\n"))), boundary)
	for i := 0; i < 2; i++ {
		part, err := mr.NextPart()
		if err != nil {
			break // the transport refuses it
		}
		switch part.FormName() {
		case "operations":
			if _, err := scanRequest(part, lim.MaxVariablesBytes); err != nil {
				var over errVariablesTooLarge
				var bad errBadJSON
				switch {
				case errors.As(err, &over):
					writeCodedError(w, http.StatusRequestEntityTooLarge, core.CodeBadInput, over.Error())
					return false
				case errors.As(err, &bad):
					writeCodedError(w, http.StatusBadRequest, core.CodeBadInput, "the operations part: "+graph.ClipMessage(bad.Error()))
					return false
				}
			}
		case "map":
			n, _ := io.Copy(io.Discard, io.LimitReader(part, maxMapBytes+1))
			if n > maxMapBytes {
				writeCodedError(w, http.StatusRequestEntityTooLarge, core.CodeBadInput, "the map part of the multipart request is larger than "+graph.ByteSize(maxMapBytes))
				return false
			}
		}
	}
	r.Body = readCloser{io.MultiReader(bytes.NewReader(head), br), r.Body}
	return true
}

var errHeadTooLarge = errors.New("multipart head over the limit")

// readPartsHead reads br up to and including the n-th occurrence of delim
// (the delimiter that opens the third part, or closes the body), at most
// limit bytes.
func readPartsHead(br *bufio.Reader, delim []byte, n int, limit int64) ([]byte, error) {
	var head bytes.Buffer
	seen := 0
	for seen < n {
		b, err := br.ReadByte()
		if err != nil {
			return head.Bytes(), err
		}
		head.WriteByte(b)
		if int64(head.Len()) > limit {
			return nil, errHeadTooLarge
		}
		if b == delim[len(delim)-1] && head.Len() >= len(delim) && bytes.HasSuffix(head.Bytes(), delim) {
			seen++
		}
	}
	return head.Bytes(), nil
}

type readCloser struct {
	io.Reader
	io.Closer
}
