package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"os"
	"strings"
)

// postMultipartStream sends a GraphQL multipart request whose file part is
// streamed from file.Reader through a pipe, so that neither side of the
// client holds the whole file.
func (c *Client) postMultipartStream(ctx context.Context, ops []byte, name string, file Upload) ([]byte, string, error) {
	if body, ok := fileBody(ops, name, file); ok {
		return c.send(ctx, body, body.contentType)
	}
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		err := func() error {
			part, err := filePart(mw, ops, name, file)
			if err != nil {
				return err
			}
			if _, err := io.Copy(part, file.Reader); err != nil {
				return fmt.Errorf("upload %s: %w", file.Name, err)
			}
			return mw.Close()
		}()
		pw.CloseWithError(err)
	}()
	raw, status, err := c.send(ctx, pr, mw.FormDataContentType())
	pr.Close()
	return raw, status, err
}

// ExportURL is the URL of the kernel's streamed export of a session
// (GET /sessions/{id}/export, docs/export.md).
func (c *Client) ExportURL(sessionID string) string {
	return c.routeURL("/sessions/" + url.PathEscape(sessionID) + "/export")
}

// AttachmentURL is the URL of an attachment's bytes (GET /attachments/{id},
// docs/security.md).
func (c *Client) AttachmentURL(id string) string {
	return c.routeURL("/attachments/" + url.PathEscape(id))
}

func (c *Client) routeURL(path string) string {
	scheme := "http"
	if c.tls {
		scheme = "https"
	}
	return scheme + "://" + c.addr + path
}

// ExportSessionTo streams the foya.session document of a session to w from
// the kernel's export route: no size bound, nothing held whole. A kernel
// error before the document starts comes back as *Error; a transfer cut
// short is an error (what was written to w is then incomplete).
func (c *Client) ExportSessionTo(ctx context.Context, sessionID string, w io.Writer) error {
	_, err := c.getTo(ctx, c.ExportURL(sessionID), "the export of session "+sessionID, w)
	return err
}

// AttachmentTo streams an attachment's stored bytes to w and returns the
// file name the kernel gives it (its name as uploaded or generated). Errors
// as ExportSessionTo.
func (c *Client) AttachmentTo(ctx context.Context, id string, w io.Writer) (name string, err error) {
	resp, err := c.getTo(ctx, c.AttachmentURL(id)+"?download=1", "attachment "+id, w)
	if err != nil {
		return "", err
	}
	if _, params, err := mime.ParseMediaType(resp.Get("Content-Disposition")); err == nil {
		name = params["filename"]
	}
	return name, nil
}

// getTo streams the body of a GET of one of the kernel's plain routes to w
// and returns the answer's headers; a coded error answer is *Error.
func (c *Client) getTo(ctx context.Context, u, what string, w io.Writer) (http.Header, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("kernel at %s: %w", c.addr, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		var r struct {
			Errors []wireError `json:"errors"`
		}
		if json.Unmarshal(raw, &r) == nil && len(r.Errors) > 0 {
			return nil, toError(r.Errors)
		}
		return nil, fmt.Errorf("kernel at %s answered %s to %s: %.120q", c.addr, resp.Status, what, raw)
	}
	if _, err := io.Copy(w, resp.Body); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return resp.Header, nil
}

// TextPageBytes is how many bytes of a text MessageText reads per request.
const TextPageBytes = 1 << 20

// MessageText reads the whole text (textBytes long) of the message with
// the given seq, TextPageBytes at a time with Message.text(offset:,
// limit:): for a message too large for one response, or the rest of a live
// event's cut message (SessionEvent.messageTruncated). Pages end on
// character boundaries, so each starts where the previous one ended.
func MessageText(ctx context.Context, c *Client, sessionID string, seq, textBytes int) (string, error) {
	var b strings.Builder
	b.Grow(textBytes)
	for b.Len() < textBytes {
		resp, err := MessageTextPage(ctx, c, sessionID, seq-1, b.Len(), TextPageBytes)
		if err != nil {
			return "", err
		}
		if resp.Session == nil || len(resp.Session.Messages) == 0 || resp.Session.Messages[0].Seq != seq {
			return "", fmt.Errorf("message %d of session %s is gone", seq, sessionID)
		}
		page := resp.Session.Messages[0].Text
		if page == "" {
			break
		}
		b.WriteString(page)
	}
	return b.String(), nil
}

// multipartFile is a multipart request whose file part is a regular file:
// it is sent with its Content-Length (so the kernel spools it to disk
// rather than reading it into memory) and read from the file again for
// each attempt, never held whole.
type multipartFile struct {
	head, tail  []byte
	f           *os.File
	off, size   int64
	contentType string
}

// fileBody frames file as the only file of a multipart request when it is
// a regular file; false otherwise.
func fileBody(ops []byte, name string, file Upload) (*multipartFile, bool) {
	f, ok := file.Reader.(*os.File)
	if !ok {
		return nil, false
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil, false
	}
	off, err := f.Seek(0, io.SeekCurrent)
	if err != nil || off > fi.Size() {
		return nil, false
	}
	var frame bytes.Buffer
	mw := multipart.NewWriter(&frame)
	if _, err := filePart(mw, ops, name, file); err != nil {
		return nil, false
	}
	head := bytes.Clone(frame.Bytes())
	_ = mw.Close()
	return &multipartFile{head: head, tail: frame.Bytes()[len(head):], f: f, off: off, size: fi.Size() - off, contentType: mw.FormDataContentType()}, true
}

// Read makes multipartFile an io.Reader for send; sendRetrying uses reopen.
func (b *multipartFile) Read([]byte) (int, error) {
	return 0, errors.New("multipartFile is read through reopen")
}

// reopen returns the whole body from its start, with its length.
func (b *multipartFile) reopen() *sizedReader {
	return &sizedReader{
		Reader: io.MultiReader(bytes.NewReader(b.head), io.NewSectionReader(b.f, b.off, b.size), bytes.NewReader(b.tail)),
		n:      int64(len(b.head)) + b.size + int64(len(b.tail)),
	}
}

// sizedReader is a request body of known length.
type sizedReader struct {
	io.Reader
	n int64
}

// filePart writes the operations and map fields of a GraphQL multipart
// request whose one file is variable name, and starts the file's part.
func filePart(mw *multipart.Writer, ops []byte, name string, file Upload) (io.Writer, error) {
	if err := mw.WriteField("operations", string(ops)); err != nil {
		return nil, err
	}
	m, _ := json.Marshal(map[string][]string{"0": {"variables." + name}})
	if err := mw.WriteField("map", string(m)); err != nil {
		return nil, err
	}
	h := make(textproto.MIMEHeader)
	h.Set("Content-Disposition", multipart.FileContentDisposition("0", file.Name))
	if file.MediaType != "" {
		h.Set("Content-Type", file.MediaType)
	}
	return mw.CreatePart(h)
}
