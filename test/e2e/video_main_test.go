package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foya-dev/foya/client"
	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// Video generation goes through the VIDEO connection's provider plugin with
// the connection's declared video protocol: the built-in openai provider
// speaks openai_video, and a third-party plugin built against plugins/sdk
// that declares video_generator generates too; the video is stored and
// returned as an attachment (PRV-2).
func TestGenerateVideoThroughPlugins(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	dir := filepath.Join(data, "plugins")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	installBuilt(t, "videoecho", filepath.Join(dir, "foya-videoecho"))
	k := startKernel(t, data)
	pl := k.listPlugins(t)
	var ve *pluginJSON
	for i, p := range pl.Plugins {
		if p.ProviderKind == "videoecho" {
			ve = &pl.Plugins[i]
		}
	}
	if ve == nil || !ve.Healthy || !strings.Contains(strings.Join(ve.Capabilities, ","), "video_generator") {
		t.Fatalf("plugins = %+v", pl.Plugins)
	}

	// No VIDEO default and no connection: UNAVAILABLE.
	if code, msg := k.generateVideoError(t, map[string]any{"prompt": "a fox"}); code != "UNAVAILABLE" || !strings.Contains(msg, "VIDEO") {
		t.Fatalf("no default: %s %q", code, msg)
	}
	// (a) The built-in openai provider speaks openai_video (OpenAI's
	// Videos API): a job created, read until completed, its 6 MiB video
	// downloaded with the key and carried by its plugin process.
	fake := openaitest.New(t)
	oa := k.createConnection(t, client.ConnectionInput{Name: ptr("oa-video"), ProviderKind: ptr("openai"), Type: ptr(client.ConnectionTypeVideo), VideoProtocol: ptr("openai_video"), BaseUrl: ptr(fake.BaseURL()), ApiKey: ptr("sk-vid"), Models: []client.ModelInput{{Id: "sora-2"}}})
	mp4 := openaitest.MP4("a fox", 6<<20)
	fake.Enqueue(openaitest.VideoJob("video_e2e", "queued", 0), openaitest.VideoJob("video_e2e", "in_progress", 50),
		openaitest.VideoJob("video_e2e", "completed", 100), openaitest.VideoContent(mp4))
	var got struct {
		GenerateVideo []struct {
			MediaType, Sha256 string
			Size              int
		}
	}
	decodeAs(t, k.generateVideo(t, map[string]any{"prompt": "a fox", "connectionId": oa, "durationSeconds": 4, "size": "720x1280"}), &got)
	mp4Sum := sha256.Sum256(mp4)
	if len(got.GenerateVideo) != 1 || got.GenerateVideo[0].MediaType != "video/mp4" || got.GenerateVideo[0].Size != len(mp4) || got.GenerateVideo[0].Sha256 != hex.EncodeToString(mp4Sum[:]) {
		t.Fatalf("openai video: %+v", got.GenerateVideo)
	}
	if reqs := fake.Requests(); len(reqs) != 4 || reqs[0].Path != "/v1/videos" || reqs[3].Path != "/v1/videos/video_e2e/content" || reqs[3].Header.Get("Authorization") != "Bearer sk-vid" {
		t.Fatalf("requests %+v", reqs)
	}
	// A job the service fails is a PROVIDER_ERROR with its reason, never the key.
	fake.Enqueue(openaitest.VideoFailed("video_bad", "moderation_blocked", "blocked (sk-vid)"))
	code, msg := k.generateVideoError(t, map[string]any{"prompt": "a fox", "connectionId": oa})
	if code != "PROVIDER_ERROR" || !strings.Contains(msg, "moderation_blocked") || strings.Contains(msg, "sk-vid") {
		t.Fatalf("failed openai video: %s %q", code, msg)
	}
	// A non-VIDEO connection is BAD_INPUT.
	lang := k.createConnection(t, client.ConnectionInput{Name: ptr("chat"), ProviderKind: ptr("openai"), BaseUrl: ptr("http://127.0.0.1:1/v1"), Models: []client.ModelInput{{Id: "m"}}})
	if code, _ := k.generateVideoError(t, map[string]any{"prompt": "a fox", "connectionId": lang}); code != "BAD_INPUT" {
		t.Fatalf("language connection: %s", code)
	}

	// (b) The third-party plugin generates the video with the declared protocol.
	vc := k.createConnection(t, client.ConnectionInput{Name: ptr("ve"), ProviderKind: ptr("videoecho"), Type: ptr(client.ConnectionTypeVideo), VideoProtocol: ptr("openai_video"), BaseUrl: ptr("http://127.0.0.1:1/v1"), Models: []client.ModelInput{{Id: "clip-1"}}})
	if code, _ := k.generateVideoError(t, map[string]any{"prompt": "a fox", "connectionId": vc, "durationSeconds": 0}); code != "BAD_INPUT" {
		t.Fatalf("duration 0: %s", code)
	}
	var out struct {
		GenerateVideo []struct {
			ID, Name, Kind, MediaType, Sha256 string
			Size                              int
		}
	}
	decodeAs(t, k.generateVideo(t, map[string]any{"prompt": "a fox in the snow", "connectionId": vc, "durationSeconds": 8, "size": "1280x720"}), &out)
	want := "\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom" + "FAKEMP4 protocol=openai_video model=clip-1 size=1280x720 duration=8 prompt=a fox in the snow"
	sum := sha256.Sum256([]byte(want))
	if len(out.GenerateVideo) != 1 {
		t.Fatalf("attachments %+v", out.GenerateVideo)
	}
	a := out.GenerateVideo[0]
	if a.ID == "" || a.MediaType != "video/mp4" || !strings.HasSuffix(a.Name, ".mp4") || a.Size != len(want) || a.Sha256 != hex.EncodeToString(sum[:]) {
		t.Fatalf("attachment %+v, want the plugin's %d bytes", a, len(want))
	}
	// The provider's own failure is a PROVIDER_ERROR.
	if code, msg := k.generateVideoError(t, map[string]any{"prompt": "please fail", "connectionId": vc}); code != "PROVIDER_ERROR" || !strings.Contains(msg, "refused") {
		t.Fatalf("provider failure: %s %q", code, msg)
	}
}
