package web

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"strconv"
)

// favicon is /favicon.ico: a 32×32 icon (a PNG in an ICO container, as
// every browser reads it) so that browsers asking for it by themselves get
// an answer, not a 404 in the log.
var favicon = makeFavicon()

func makeFavicon() []byte {
	const n = 32
	img := image.NewNRGBA(image.Rect(0, 0, n, n))
	bg := color.NRGBA{0x1f, 0x6f, 0x5c, 0xff}
	fg := color.NRGBA{0xf5, 0xf0, 0xe1, 0xff}
	for y := 0; y < n; y++ {
		for x := 0; x < n; x++ {
			c := bg
			// An F: the stem and two bars.
			if (x >= 10 && x < 14 && y >= 7 && y < 26) || (y >= 7 && y < 11 && x >= 10 && x < 23) || (y >= 15 && y < 18 && x >= 10 && x < 20) {
				c = fg
			}
			img.SetNRGBA(x, y, c)
		}
	}
	var p bytes.Buffer
	_ = png.Encode(&p, img)
	var b bytes.Buffer
	le := binary.LittleEndian
	_ = binary.Write(&b, le, [3]uint16{0, 1, 1})                 // reserved, type icon, one image
	b.Write([]byte{n, n, 0, 0})                                  // width, height, no palette, reserved
	_ = binary.Write(&b, le, [2]uint16{1, 32})                   // planes, bits per pixel
	_ = binary.Write(&b, le, [2]uint32{uint32(p.Len()), 6 + 16}) // size, offset
	b.Write(p.Bytes())
	return b.Bytes()
}

func FaviconHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		h := w.Header()
		h.Set("Content-Type", "image/x-icon")
		h.Set("Cache-Control", "public, max-age=86400")
		h.Set("Content-Length", strconv.Itoa(len(favicon)))
		if r.Method == http.MethodHead {
			return
		}
		_, _ = w.Write(favicon)
	})
}
