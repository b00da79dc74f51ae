package httpwire

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"
)

func TestLineReader(t *testing.T) {
	long := strings.Repeat("x", 5000)
	in := "a\nbb\r\n" + long + "\n\nlast"
	for name, rd := range map[string]io.Reader{
		"whole":    strings.NewReader(in),
		"one byte": iotest.OneByteReader(strings.NewReader(in)),
		"half":     iotest.HalfReader(strings.NewReader(in)),
		"data+EOF": iotest.DataErrReader(strings.NewReader(in)),
	} {
		t.Run(name, func(t *testing.T) {
			lr := NewLineReader(rd, 16, 64)
			var got []string
			var line []byte
			for {
				var err error
				line, err = lr.ReadLine(line[:0], 1<<20)
				if err == io.EOF {
					got = append(got, string(line)+"<EOF>")
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, string(line))
			}
			want := []string{"a\n", "bb\r\n", long + "\n", "\n", "last<EOF>"}
			if strings.Join(got, "|") != strings.Join(want, "|") {
				t.Fatalf("got %q", got)
			}
			if len(lr.buf) > 64 {
				t.Fatalf("buffer grew to %d, past its maximum", len(lr.buf))
			}
		})
	}
}

func TestLineReaderGrowsOnlyWhenReadsFillIt(t *testing.T) {
	lr := NewLineReader(iotest.OneByteReader(strings.NewReader(strings.Repeat("ab\n", 100))), 16, 64)
	for range 100 {
		if _, err := lr.ReadLine(nil, 100); err != nil {
			t.Fatal(err)
		}
	}
	if len(lr.buf) != 16 {
		t.Fatalf("buffer is %d bytes after reads of one byte, want 16", len(lr.buf))
	}
	lr = NewLineReader(strings.NewReader(strings.Repeat("ab\n", 100)), 16, 64)
	if _, err := lr.ReadLine(nil, 100); err != nil {
		t.Fatal(err)
	}
	for !errors.Is(readErr(lr), io.EOF) {
	}
	if len(lr.buf) != 64 {
		t.Fatalf("buffer is %d bytes after full reads, want 64", len(lr.buf))
	}
}

func readErr(lr *LineReader) error {
	_, err := lr.ReadLine(nil, 100)
	return err
}

func TestLineReaderLimit(t *testing.T) {
	lr := NewLineReader(strings.NewReader(strings.Repeat("x", 300)+"\n"), 16, 64)
	if _, err := lr.ReadLine(nil, 100); !errors.Is(err, ErrLineTooLong) {
		t.Fatalf("err = %v, want ErrLineTooLong", err)
	}
}

func TestRequestBodyReleased(t *testing.T) {
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = string(b) + " " + r.Header.Get("Content-Length") + " " + strings.Join(r.TransferEncoding, ",")
	}))
	defer srv.Close()
	req, rb, err := NewRequest(context.Background(), http.MethodPost, srv.URL, []byte(`{"a":1}`))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	rb.Release()
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got != `{"a":1} 7 ` {
		t.Fatalf("server got %q, want the body with its length, not chunked", got)
	}
	if rb.b != nil {
		t.Fatal("bytes still held after Release")
	}
	if _, err := req.GetBody(); err == nil {
		t.Fatal("GetBody after Release succeeded")
	}
}
