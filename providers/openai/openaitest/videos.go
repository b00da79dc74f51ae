package openaitest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
)

// Videos API (the openai_video protocol): a job is created by POST
// /videos, read by GET /videos/{id} until completed or failed, and its
// bytes fetched from GET /videos/{id}/content. Script one reply per
// request, in that order.

// VideoJob is a video object reply with status queued, in_progress or
// completed. It suggests the next status read after 1 ms
// (openai-poll-after-ms), so that a test does not wait.
func VideoJob(id, status string, progress int) Response {
	b, _ := json.Marshal(map[string]any{"id": id, "object": "video", "model": "sora-2", "status": status, "progress": progress,
		"created_at": 1764806400, "seconds": "4", "size": "720x1280", "prompt": "", "error": nil})
	return Response{Body: string(b), Header: http.Header{"Openai-Poll-After-Ms": {"1"}}}
}

// VideoFailed is a video object reply of a failed job.
func VideoFailed(id, code, message string) Response {
	b, _ := json.Marshal(map[string]any{"id": id, "object": "video", "model": "sora-2", "status": "failed", "progress": 0,
		"created_at": 1764806400, "error": map[string]any{"code": code, "message": message}})
	return Response{Body: string(b)}
}

// VideoContent is the content route's reply: the video's bytes.
func VideoContent(data []byte) Response {
	return Response{Body: string(data), Header: http.Header{"Content-Type": {"video/mp4"}}}
}

// MP4 returns n bytes that sniff as video/mp4 (an ISO BMFF ftyp box, then
// filler naming tag).
func MP4(tag string, n int) []byte {
	b := []byte("\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom" + tag)
	if n > len(b) {
		b = append(b, bytes.Repeat([]byte{'.'}, n-len(b))...)
	}
	return b
}

// Form decodes a multipart/form-data request body into its fields (the
// last value of each); files are not expected.
func (r Request) Form() (map[string]string, error) {
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || !strings.HasPrefix(mt, "multipart/") {
		return nil, fmt.Errorf("content type %q is not multipart: %v", r.Header.Get("Content-Type"), err)
	}
	mr := multipart.NewReader(bytes.NewReader(r.Body), params["boundary"])
	out := map[string]string{}
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		v, err := io.ReadAll(p)
		if err != nil {
			return nil, err
		}
		out[p.FormName()] = string(v)
	}
}
