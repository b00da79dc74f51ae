package storage

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// SecretKeyFileName is the default name of the secret key file in the data
// directory.
const SecretKeyFileName = "secret-key"

// sealedPrefix marks a value sealed by Sealer (format version 1).
const sealedPrefix = "aesgcm1:"

// Sealer encrypts secrets (API keys, MCP env and header values) at rest
// with AES-256-GCM. Every value has its own random nonce and is bound to
// its place (the additional data, e.g. "connection/<id>/apiKey"), so a
// sealed value copied to another row does not open there.
type Sealer struct {
	aead cipher.AEAD
}

// NewSealer returns a sealer for a 32-byte key.
func NewSealer(key []byte) (*Sealer, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("secret key: %d bytes, want 32", len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("secret key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("secret key: %w", err)
	}
	return &Sealer{aead: aead}, nil
}

// Seal encrypts plain for the place named by aad.
func (s *Sealer) Seal(plain, aad string) (string, error) {
	nonce := make([]byte, s.aead.NonceSize(), s.aead.NonceSize()+len(plain)+s.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("seal: %w", err)
	}
	out := s.aead.Seal(nonce, nonce, []byte(plain), []byte(aad))
	return sealedPrefix + base64.RawStdEncoding.EncodeToString(out), nil
}

// errWrongKey is what Open reports for a value it cannot authenticate.
var errWrongKey = errors.New("cannot decrypt: sealed under another secret key (every kernel on a database needs the same --secret-key-file) or damaged")

// Open decrypts a value sealed for aad.
func (s *Sealer) Open(sealed, aad string) (string, error) {
	b64, ok := strings.CutPrefix(sealed, sealedPrefix)
	if !ok {
		return "", errors.New("cannot decrypt: not a sealed value")
	}
	raw, err := base64.RawStdEncoding.DecodeString(b64)
	if err != nil || len(raw) < s.aead.NonceSize()+s.aead.Overhead() {
		return "", errWrongKey
	}
	n := s.aead.NonceSize()
	plain, err := s.aead.Open(nil, raw[:n], raw[n:], []byte(aad))
	if err != nil {
		return "", errWrongKey
	}
	return string(plain), nil
}

// LoadOrCreateSecretKey reads the key file at path (32 random bytes,
// base64 on one line), creating it with mode 0600 when it does not exist.
// Kernels sharing a database must all read the same key: copy the file to
// every node. A file readable by others is refused.
func LoadOrCreateSecretKey(path string) ([]byte, error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return createSecretKey(path)
	}
	if err != nil {
		return nil, fmt.Errorf("read secret key file: %w", err)
	}
	if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("secret key file %s has mode %v: make it private (chmod 600)", path, fi.Mode().Perm())
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(raw)))
	if err != nil || len(key) != 32 {
		return nil, fmt.Errorf("secret key file %s: want 32 bytes in base64 on one line (remove the file to have a new key made, which makes stored keys unreadable)", path)
	}
	return key, nil
}

func createSecretKey(path string) ([]byte, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create secret key directory: %w", err)
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("make secret key: %w", err)
	}
	// Written aside and linked into place: another process starting at the
	// same time sees no file or a complete one, and one of them wins.
	f, err := os.CreateTemp(filepath.Dir(path), ".secret-key-*")
	if err != nil {
		return nil, fmt.Errorf("create secret key file: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	_, werr := f.WriteString(base64.StdEncoding.EncodeToString(key) + "\n")
	if err := errors.Join(werr, f.Chmod(0o600), f.Sync(), f.Close()); err != nil {
		return nil, fmt.Errorf("write secret key file: %w", err)
	}
	if err := os.Link(tmp, path); errors.Is(err, fs.ErrExist) {
		return LoadOrCreateSecretKey(path)
	} else if err != nil {
		return nil, fmt.Errorf("create secret key file: %w", err)
	}
	return key, nil
}
