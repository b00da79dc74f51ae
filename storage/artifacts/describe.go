package artifacts

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	_ "image/gif"  // register GIF for image.DecodeConfig
	_ "image/jpeg" // register JPEG for image.DecodeConfig
	_ "image/png"  // register PNG for image.DecodeConfig
	"io"
	"mime"
	"net/http"
	"path/filepath"
	"strings"
)

// Attachment kinds (core.Attachment.Kind).
const (
	KindImage = "image"
	KindFile  = "file"
)

// sniffLen is how many bytes net/http.DetectContentType looks at.
const sniffLen = 512

// Describe classifies a file for an attachment (MSG-3) from its name and
// the start of its bytes. It reads only what it needs from r: at most 512
// bytes to sniff the media type plus the image header.
//
// The media type comes from content sniffing (net/http.DetectContentType);
// when sniffing finds only generic bytes or plain text, the extension of
// name gives a more specific type (an extension never makes text an image,
// audio or video). kind is KindImage when the media type is image/* and the
// header decodes to positive dimensions, else KindFile. PNG, JPEG and GIF
// headers are decoded with image.DecodeConfig; the standard library has no
// WebP decoder, so the WebP VP8, VP8L and VP8X headers are parsed by hand.
// Other image types (BMP, ICO, SVG, HEIC …) keep their media type but are
// KindFile with no dimensions. err reports only a failure to read r.
func Describe(name string, r io.Reader) (kind, mediaType string, width, height int, err error) {
	br := bufio.NewReaderSize(r, sniffLen)
	head, err := br.Peek(sniffLen)
	if err != nil && !errors.Is(err, io.EOF) {
		return "", "", 0, 0, fmt.Errorf("describe %s: %w", name, err)
	}
	mediaType = sniffedType(name, head)
	if !strings.HasPrefix(mediaType, "image/") {
		return KindFile, mediaType, 0, 0, nil
	}
	if mediaType == "image/webp" {
		width, height = webpSize(head)
	} else if cfg, _, decErr := image.DecodeConfig(br); decErr == nil {
		// A decode error only means "not an image we can size"; the file is
		// still stored and described, as a plain file.
		width, height = cfg.Width, cfg.Height
	}
	if width <= 0 || height <= 0 {
		return KindFile, mediaType, 0, 0, nil
	}
	return KindImage, mediaType, width, height, nil
}

func sniffedType(name string, head []byte) string {
	sniffed := http.DetectContentType(head)
	byExt := mime.TypeByExtension(strings.ToLower(filepath.Ext(name)))
	if byExt == "" {
		return sniffed
	}
	switch {
	case sniffed == "application/octet-stream":
		return byExt
	case strings.HasPrefix(sniffed, "text/plain"):
		for _, prefix := range []string{"image/", "audio/", "video/"} {
			if strings.HasPrefix(byExt, prefix) {
				return sniffed
			}
		}
		return byExt
	}
	return sniffed
}

// webpSize reads the canvas size from the first chunk of a WebP file
// (RFC 9649): lossy "VP8 ", lossless "VP8L" or extended "VP8X". It returns
// zeros when the header is not one of them or is too short.
func webpSize(b []byte) (width, height int) {
	if len(b) < 30 || string(b[0:4]) != "RIFF" || string(b[8:12]) != "WEBP" {
		return 0, 0
	}
	p := b[20:] // payload of the first chunk, after fourcc and size
	switch string(b[12:16]) {
	case "VP8 ":
		// 3-byte frame tag, start code 9d 01 2a, then 14-bit width and
		// height (the top 2 bits are scaling).
		if p[3] != 0x9d || p[4] != 0x01 || p[5] != 0x2a {
			return 0, 0
		}
		return int(binary.LittleEndian.Uint16(p[6:8]) & 0x3fff), int(binary.LittleEndian.Uint16(p[8:10]) & 0x3fff)
	case "VP8L":
		// Signature 0x2f, then width-1 and height-1 in 14 bits each.
		if p[0] != 0x2f {
			return 0, 0
		}
		bits := binary.LittleEndian.Uint32(p[1:5])
		return int(bits&0x3fff) + 1, int((bits>>14)&0x3fff) + 1
	case "VP8X":
		// Flags (1 byte), reserved (3), canvas width-1 and height-1 (24 bits
		// each).
		return int(uint24(p[4:7])) + 1, int(uint24(p[7:10])) + 1
	}
	return 0, 0
}

func uint24(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16
}
