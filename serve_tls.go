package main

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
	if _, err := r.reload(); err != nil {
		return nil, err
	}
	return &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: r.get}, nil
}

type certReloader struct {
	certFile, keyFile string
	log               *slog.Logger

	mu                sync.Mutex
	cert              *tls.Certificate
	certMod, keyMod   time.Time
	certSize, keySize int64
}

func (r *certReloader) reload() (*tls.Certificate, error) {
	cert, err := tls.LoadX509KeyPair(r.certFile, r.keyFile)
	if err != nil {
		return nil, fmt.Errorf("load TLS certificate %s and key %s: %w", r.certFile, r.keyFile, err)
	}
	r.cert = &cert
	return r.cert, nil
}

func (r *certReloader) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	cfi, cerr := os.Stat(r.certFile)
	kfi, kerr := os.Stat(r.keyFile)
	r.mu.Lock()
	defer r.mu.Unlock()
	if cerr != nil || kerr != nil {
		return r.cert, nil
	}
	if cfi.ModTime().Equal(r.certMod) && kfi.ModTime().Equal(r.keyMod) && cfi.Size() == r.certSize && kfi.Size() == r.keySize {
		return r.cert, nil
	}
	first := r.certMod.IsZero()
	r.certMod, r.keyMod, r.certSize, r.keySize = cfi.ModTime(), kfi.ModTime(), cfi.Size(), kfi.Size()
	old := r.cert
	if _, err := r.reload(); err != nil {
		r.log.Warn("the TLS certificate changed but cannot be loaded; the previous one stays in use", "err", err)
		return old, nil
	}
	if !first {
		r.log.Info("reloaded the TLS certificate", "cert", r.certFile)
	}
	return r.cert, nil
}
