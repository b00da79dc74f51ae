package daemon

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"
)

// loadTLS loads the certificate and key for HTTPS and WSS. They are read
// again when either file changes (checked at each TLS handshake), so a
// renewed certificate needs no restart; a renewal that cannot be loaded
// leaves the previous certificate in use (and is logged).
func loadTLS(certFile, keyFile string, log *slog.Logger) (*tls.Config, error) {
	r := &certReloader{certFile: certFile, keyFile: keyFile, log: log}
	if err := r.load(r.stamp()); err != nil {
		return nil, err
	}
	return &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: r.get}, nil
}

type certReloader struct {
	certFile, keyFile string
	log               *slog.Logger

	mu    sync.Mutex
	cert  *tls.Certificate
	files fileStamp // what cert was loaded from
}

// fileStamp identifies the versions of the two files.
type fileStamp struct {
	certMod, keyMod   time.Time
	certSize, keySize int64
}

func (s fileStamp) equal(o fileStamp) bool {
	return s.certMod.Equal(o.certMod) && s.keyMod.Equal(o.keyMod) && s.certSize == o.certSize && s.keySize == o.keySize
}

func (r *certReloader) stamp() fileStamp {
	var s fileStamp
	if fi, err := os.Stat(r.certFile); err == nil {
		s.certMod, s.certSize = fi.ModTime(), fi.Size()
	}
	if fi, err := os.Stat(r.keyFile); err == nil {
		s.keyMod, s.keySize = fi.ModTime(), fi.Size()
	}
	return s
}

func (r *certReloader) load(s fileStamp) error {
	cert, err := tls.LoadX509KeyPair(r.certFile, r.keyFile)
	if err != nil {
		return fmt.Errorf("load TLS certificate %s and key %s: %w", r.certFile, r.keyFile, err)
	}
	r.cert, r.files = &cert, s
	return nil
}

func (r *certReloader) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	s := r.stamp()
	r.mu.Lock()
	defer r.mu.Unlock()
	if s.equal(r.files) {
		return r.cert, nil
	}
	if err := r.load(s); err != nil {
		// Remember the stamp: the same broken files are not retried (or
		// logged) at every handshake; the next change is.
		r.files = s
		r.log.Warn("the TLS certificate changed but cannot be loaded; the previous one stays in use", "err", err)
		return r.cert, nil
	}
	r.log.Info("reloaded the TLS certificate", "cert", r.certFile)
	return r.cert, nil
}
