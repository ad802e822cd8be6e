package streams_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rspo-dev/rspo/streams"
)

// writeSelfSignedCert writes a CA-less self-signed certificate for
// 127.0.0.1 and its key as PEM files in dir and returns their paths. The
// certificate is its own CA.
func writeSelfSignedCert(t *testing.T, dir string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "rspo test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	writePEM(t, certFile, "CERTIFICATE", der)
	writePEM(t, keyFile, "EC PRIVATE KEY", keyDER)
	return certFile, keyFile
}

func writePEM(t *testing.T, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestEmbeddedTLS(t *testing.T) {
	dir := t.TempDir()
	cert, key := writeSelfSignedCert(t, dir)
	e, err := streams.StartEmbedded(streams.EmbeddedConfig{StoreDir: t.TempDir(), Port: -1, TLSCert: cert, TLSKey: key})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Shutdown)
	if !strings.HasPrefix(e.ClientURL(), "tls://") {
		t.Fatalf("got client URL %q, want tls://", e.ClientURL())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	nc, js, err := streams.Connect(ctx, e.ClientURL(), streams.ConnectOptions{TLSCA: cert})
	if err != nil {
		t.Fatalf("with the CA: %v", err)
	}
	if err := streams.Ensure(ctx, js, streams.Options{}); err != nil {
		t.Fatalf("Ensure over TLS: %v", err)
	}
	nc.Close()
	if nc, _, err := e.Connect(ctx, "in-process"); err != nil {
		t.Errorf("in-process connection to a TLS server: %v", err)
	} else {
		nc.Close()
	}

	_, _, err = streams.Connect(ctx, e.ClientURL(), streams.ConnectOptions{Timeout: 2 * time.Second})
	if !errors.Is(err, streams.ErrConnect) || !strings.Contains(err.Error(), "check the TLS CA") {
		t.Fatalf("without the CA: got %v, want a connect error with a TLS hint", err)
	}
}

func TestEmbeddedBadTLSFiles(t *testing.T) {
	_, err := streams.StartEmbedded(streams.EmbeddedConfig{StoreDir: t.TempDir(), Port: -1, TLSCert: "missing.pem", TLSKey: "missing.key"})
	if !errors.Is(err, streams.ErrInvalidConfig) {
		t.Fatalf("got %v, want ErrInvalidConfig", err)
	}
}
