package artifacts_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/foya-dev/foya/storage/artifacts"
)

func encoded(t *testing.T, enc func(io.Writer, image.Image) error, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	img.Set(0, 0, color.RGBA{R: 255, A: 255})
	var b bytes.Buffer
	if err := enc(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDescribe(t *testing.T) {
	pngBytes := encoded(t, png.Encode, 31, 17)
	jpegBytes := encoded(t, func(w io.Writer, m image.Image) error { return jpeg.Encode(w, m, nil) }, 40, 30)
	gifBytes := encoded(t, func(w io.Writer, m image.Image) error { return gif.Encode(w, m, nil) }, 5, 6)
	// A large PNG of noise (it does not compress): only its header may be read.
	noise := image.NewRGBA(image.Rect(0, 0, 300, 200))
	rnd := rand.New(rand.NewPCG(1, 2))
	for i := range noise.Pix {
		noise.Pix[i] = byte(rnd.Uint32())
	}
	var big bytes.Buffer
	if err := png.Encode(&big, noise); err != nil {
		t.Fatal(err)
	}
	bigPNG := big.Bytes()
	if len(bigPNG) < 100<<10 {
		t.Fatalf("noise PNG is only %d bytes", len(bigPNG))
	}

	// WebP headers (RFC 9649), padded with zeros as a real payload would be.
	pad := make([]byte, 16)
	webpLossy := append(unhex(t, "52494646 00000000 57454250 56503820 00000000 000000 9d012a 0700 0900"), pad...)
	webpLossless := append(unhex(t, "52494646 00000000 57454250 5650384c 00000000 2f 06000200"), pad...)
	// The first 32 bytes of CPython's test_email/data/python.webp (16x16, VP8X).
	webpExtended := unhex(t, "52494646 a8010000 57454250 56503858 0a000000 10000000 0f00000f 0000414c")
	webpBroken := append(unhex(t, "52494646 00000000 57454250 56503820 00000000 000000 000000 0700 0900"), pad...)

	tests := []struct {
		name      string
		file      string
		data      []byte
		kind      string
		mediaType string
		w, h      int
	}{
		{"png", "a.png", pngBytes, "image", "image/png", 31, 17},
		{"png without extension", "blob", pngBytes, "image", "image/png", 31, 17},
		{"png with wrong extension", "a.txt", pngBytes, "image", "image/png", 31, 17},
		{"large png header only", "big.png", bigPNG, "image", "image/png", 300, 200},
		{"jpeg", "photo.JPG", jpegBytes, "image", "image/jpeg", 40, 30},
		{"gif", "anim.gif", gifBytes, "image", "image/gif", 5, 6},
		{"webp lossy", "a.webp", webpLossy, "image", "image/webp", 7, 9},
		{"webp lossless", "a.webp", webpLossless, "image", "image/webp", 7, 9},
		{"webp extended", "a.webp", webpExtended, "image", "image/webp", 16, 16},
		{"webp bad start code", "a.webp", webpBroken, "file", "image/webp", 0, 0},
		{"truncated png", "a.png", pngBytes[:20], "file", "image/png", 0, 0},
		{"text", "notes.txt", []byte("hello world\n"), "file", "text/plain; charset=utf-8", 0, 0},
		{"text named like an image", "fake.png", []byte("hello world\n"), "file", "text/plain; charset=utf-8", 0, 0},
		{"json by extension", "data.json", []byte(`{"a": 1}`), "file", "application/json", 0, 0},
		{"pdf", "doc.pdf", []byte("%PDF-1.7\n..."), "file", "application/pdf", 0, 0},
		{"unknown binary", "x.bin", []byte{0, 1, 2, 3, 0xff}, "file", "application/octet-stream", 0, 0},
		{"empty", "empty", nil, "file", "text/plain; charset=utf-8", 0, 0},
		{"bmp has no decoder", "a.bmp", []byte("BM" + strings.Repeat("\x00", 60)), "file", "image/bmp", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &countingReader{r: bytes.NewReader(tt.data)}
			kind, mt, w, h, err := artifacts.Describe(tt.file, r)
			if err != nil {
				t.Fatal(err)
			}
			if kind != tt.kind || mt != tt.mediaType || w != tt.w || h != tt.h {
				t.Errorf("Describe = %s %q %dx%d, want %s %q %dx%d", kind, mt, w, h, tt.kind, tt.mediaType, tt.w, tt.h)
			}
			if r.n > 4096 {
				t.Errorf("read %d bytes of a %d-byte file; only the header is needed", r.n, len(tt.data))
			}
		})
	}
}

func TestDescribeReadError(t *testing.T) {
	_, _, _, _, err := artifacts.Describe("x", &failingReader{})
	if err == nil || !strings.Contains(err.Error(), "connection reset") {
		t.Fatalf("err = %v, want the read error", err)
	}
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	if errors.Is(err, io.EOF) {
		return n, io.EOF
	}
	return n, err
}
