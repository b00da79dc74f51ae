package openai

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/foya-dev/foya/plugins/sdk"
)

// maxImageBytes bounds one generated image (decoded or downloaded).
const maxImageBytes = 20 << 20

// GenerateImage calls POST {base}/images/generations (PRV-2). It sends no
// response_format, since gpt-image models reject it: they answer b64_json,
// DALL·E answers a url, which is then downloaded (without the API key).
func (p *Provider) GenerateImage(ctx context.Context, ep sdk.Endpoint, req sdk.ImageRequest) (sdk.ImageResult, error) {
	body := map[string]any{"model": req.Model, "prompt": req.Prompt}
	if req.Count > 0 {
		body["n"] = req.Count
	}
	if req.Size != "" {
		body["size"] = req.Size
	}
	resp, err := p.do(ctx, ep, http.MethodPost, "/images/generations", body)
	if err != nil {
		return sdk.ImageResult{}, err
	}
	defer resp.Body.Close()
	var r struct {
		Data []struct {
			B64JSON       string `json:"b64_json"`
			URL           string `json:"url"`
			RevisedPrompt string `json:"revised_prompt"`
		} `json:"data"`
		OutputFormat string `json:"output_format"`
		Usage        *struct {
			InputTokens  int64 `json:"input_tokens"`
			OutputTokens int64 `json:"output_tokens"`
			TotalTokens  int64 `json:"total_tokens"`
		} `json:"usage"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 4*maxImageBytes)).Decode(&r); err != nil {
		if ctx.Err() != nil {
			return sdk.ImageResult{}, ctx.Err()
		}
		return sdk.ImageResult{}, &sdk.Error{Category: sdk.CategoryServer, Message: "decode image response: " + err.Error()}
	}
	var out sdk.ImageResult
	for i, d := range r.Data {
		var data []byte
		switch {
		case d.B64JSON != "":
			if data, err = base64.StdEncoding.DecodeString(d.B64JSON); err != nil {
				return sdk.ImageResult{}, &sdk.Error{Category: sdk.CategoryServer, Message: fmt.Sprintf("image %d: invalid base64", i)}
			}
		case d.URL != "":
			if data, err = p.download(ctx, d.URL); err != nil {
				return sdk.ImageResult{}, err
			}
		default:
			return sdk.ImageResult{}, &sdk.Error{Category: sdk.CategoryServer, Message: fmt.Sprintf("image %d has neither b64_json nor url", i)}
		}
		if len(data) > maxImageBytes {
			return sdk.ImageResult{}, &sdk.Error{Category: sdk.CategoryServer, Message: fmt.Sprintf("image %d is larger than %d bytes", i, maxImageBytes)}
		}
		out.Images = append(out.Images, sdk.GeneratedImage{MediaType: http.DetectContentType(data), Data: data, RevisedPrompt: d.RevisedPrompt})
	}
	if len(out.Images) == 0 {
		return sdk.ImageResult{}, &sdk.Error{Category: sdk.CategoryServer, Message: "the service returned no image"}
	}
	if u := r.Usage; u != nil {
		out.Usage = &sdk.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, TotalTokens: u.TotalTokens, Model: req.Model}
	}
	return out, nil
}

func (p *Provider) download(ctx context.Context, url string) ([]byte, error) {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, &sdk.Error{Category: sdk.CategoryServer, Message: "image url: " + err.Error()}
	}
	resp, err := p.http.Do(hreq)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, networkError("GET image", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return nil, &sdk.Error{Category: sdk.CategoryServer, StatusCode: resp.StatusCode, Message: fmt.Sprintf("download image: %s", resp.Status)}
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxImageBytes+1))
	if err != nil {
		return nil, networkError("read image", err)
	}
	return data, nil
}
