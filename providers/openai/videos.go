package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/foya-dev/foya/plugins/sdk"
)

// VideoProtocol is the video protocol the provider speaks: OpenAI's Videos
// API (POST /videos, GET /videos/{id}, GET /videos/{id}/content), which
// gateways such as LiteLLM also serve for other vendors' models.
const VideoProtocol = "openai_video"

const (
	// maxVideoBytes bounds one generated video: the kernel keeps it like an
	// upload, whose limit it is (core.MaxAttachmentBytes).
	maxVideoBytes = 20 << 20
	// defaultVideoPoll is the wait between status reads when the service
	// does not suggest one (openai-poll-after-ms); a suggestion is kept
	// within maxVideoPoll.
	defaultVideoPoll = 2 * time.Second
	maxVideoPoll     = 10 * time.Second
	// maxVideoWait bounds one job, from its creation to its video.
	maxVideoWait = 30 * time.Minute
)

// videoJob is the Videos API's video object, as far as it is read.
type videoJob struct {
	ID       string `json:"id"`
	Status   string `json:"status"`
	Progress int    `json:"progress"`
	Error    *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// GenerateVideo runs one video job of the openai_video protocol (PRV-2):
// it creates the job (a multipart form: prompt, model, seconds, size, as the
// API takes them), reads its status until it is completed or failed, at the
// pace the service suggests, and downloads the video. Cancelling ctx stops
// the wait; the job itself is left to the service.
func (p *Provider) GenerateVideo(ctx context.Context, ep sdk.Endpoint, req sdk.VideoRequest) (sdk.VideoResult, error) {
	if req.Protocol != VideoProtocol {
		return sdk.VideoResult{}, &sdk.Error{Category: sdk.CategoryBadRequest,
			Message: fmt.Sprintf("video protocol %q is not spoken by the openai provider: set the connection's videoProtocol to %q (OpenAI's Videos API) or use a provider plugin that speaks it", req.Protocol, VideoProtocol)}
	}
	var form bytes.Buffer
	w := multipart.NewWriter(&form)
	fields := [][2]string{{"prompt", req.Prompt}, {"model", req.Model}}
	if req.DurationSeconds > 0 {
		fields = append(fields, [2]string{"seconds", strconv.Itoa(req.DurationSeconds)})
	}
	if req.Size != "" && req.Size != "auto" {
		fields = append(fields, [2]string{"size", req.Size})
	}
	for _, f := range fields {
		if err := w.WriteField(f[0], f[1]); err != nil {
			return sdk.VideoResult{}, fmt.Errorf("encode video request: %w", err)
		}
	}
	if err := w.Close(); err != nil {
		return sdk.VideoResult{}, fmt.Errorf("encode video request: %w", err)
	}
	job, wait, err := p.videoCall(ctx, ep, http.MethodPost, "/videos", form.Bytes(), w.FormDataContentType())
	if err != nil {
		return sdk.VideoResult{}, err
	}
	if job.ID == "" || len(job.ID) > 256 {
		return sdk.VideoResult{}, &sdk.Error{Category: sdk.CategoryBadResponse, Message: "the service created a video job without an id (or with one over 256 bytes)"}
	}
	path := "/videos/" + url.PathEscape(job.ID)
	deadline := time.Now().Add(maxVideoWait)
	for {
		switch job.Status {
		case "completed":
			data, mediaType, err := p.videoContent(ctx, ep, path+"/content")
			if err != nil {
				return sdk.VideoResult{}, err
			}
			p.log.Info("video generated", "connection_id", ep.ConnectionID, "model", req.Model, "bytes", len(data))
			return sdk.VideoResult{Videos: []sdk.GeneratedVideo{{MediaType: mediaType, Data: data}}}, nil
		case "failed":
			msg, code := "the service reported the video job failed", ""
			if job.Error != nil {
				code = job.Error.Code
				if job.Error.Message != "" {
					msg = job.Error.Message
				}
			}
			if code != "" && !strings.Contains(msg, code) {
				msg += " [" + code + "]"
			}
			return sdk.VideoResult{}, &sdk.Error{Category: videoFailureCategory(code), Message: "video job " + job.ID + ": " + msg}
		case "queued", "in_progress", "":
		default:
			return sdk.VideoResult{}, &sdk.Error{Category: sdk.CategoryBadResponse, Message: fmt.Sprintf("video job %s: unknown status %q", job.ID, job.Status)}
		}
		if time.Now().Add(wait).After(deadline) {
			return sdk.VideoResult{}, &sdk.Error{Category: sdk.CategoryServer, Message: fmt.Sprintf("video job %s did not finish within %s (last status %q, %d%%)", job.ID, maxVideoWait, job.Status, job.Progress)}
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return sdk.VideoResult{}, ctx.Err()
		case <-t.C:
		}
		if job, wait, err = p.videoCall(ctx, ep, http.MethodGet, path, nil, ""); err != nil {
			return sdk.VideoResult{}, err
		}
	}
}

// videoCall sends one Videos API request whose answer is a video object,
// and returns it with the wait the service suggests before the next read.
func (p *Provider) videoCall(ctx context.Context, ep sdk.Endpoint, method, path string, body []byte, contentType string) (videoJob, time.Duration, error) {
	resp, err := p.doRaw(ctx, ep, method, path, body, contentType, nil)
	if err != nil {
		return videoJob{}, 0, err
	}
	defer resp.Body.Close()
	var job videoJob
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&job); err != nil {
		if ctx.Err() != nil {
			return videoJob{}, 0, ctx.Err()
		}
		return videoJob{}, 0, &sdk.Error{Category: sdk.CategoryBadResponse, Message: "decode video job: " + err.Error()}
	}
	wait := defaultVideoPoll
	if ms, err := strconv.ParseInt(resp.Header.Get("openai-poll-after-ms"), 10, 64); err == nil && ms > 0 {
		wait = min(time.Duration(ms)*time.Millisecond, maxVideoPoll)
	}
	return job, wait, nil
}

// videoContent downloads a completed job's video (with the key: the
// content route is the API's own) and names its media type from its bytes.
func (p *Provider) videoContent(ctx context.Context, ep sdk.Endpoint, path string) ([]byte, string, error) {
	resp, err := p.doRaw(ctx, ep, http.MethodGet, path, nil, "", http.Header{"Accept": {"video/mp4, video/webm, application/json"}})
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxVideoBytes+1))
	if err != nil {
		if ctx.Err() != nil {
			return nil, "", ctx.Err()
		}
		return nil, "", networkError("read video", err)
	}
	if len(data) > maxVideoBytes {
		return nil, "", &sdk.Error{Category: sdk.CategoryBadResponse, Message: fmt.Sprintf("the video is larger than %d bytes, the limit of a generated video", maxVideoBytes)}
	}
	if len(data) == 0 {
		return nil, "", &sdk.Error{Category: sdk.CategoryBadResponse, Message: "the service returned an empty video"}
	}
	mediaType := http.DetectContentType(data)
	if !strings.HasPrefix(mediaType, "video/") {
		if ct := strings.TrimSpace(strings.Split(resp.Header.Get("Content-Type"), ";")[0]); strings.HasPrefix(ct, "video/") {
			mediaType = ct
		} else {
			return nil, "", &sdk.Error{Category: sdk.CategoryBadResponse, Message: fmt.Sprintf("the video content is %s, not a video", mediaType)}
		}
	}
	return data, mediaType, nil
}

// videoFailureCategory classifies a failed job by its error code: the
// service's refusals of the prompt are the request's fault, not the
// service's.
func videoFailureCategory(code string) sdk.ErrorCategory {
	c := strings.ToLower(code)
	switch {
	case strings.Contains(c, "moderation"), strings.Contains(c, "policy"), strings.Contains(c, "invalid"):
		return sdk.CategoryBadRequest
	case strings.Contains(c, "quota"), strings.Contains(c, "billing"):
		return sdk.CategoryQuota
	case strings.Contains(c, "rate_limit"):
		return sdk.CategoryRateLimit
	}
	return sdk.CategoryServer
}
