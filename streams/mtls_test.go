package streams_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/rspo-dev/rspo/streams"
)

// testCA is a certificate authority for the mutual-TLS tests.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	file string
}

func newTestCA(t *testing.T, dir string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "rspo test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	ca := &testCA{cert: cert, key: key, file: filepath.Join(dir, "ca.pem")}
	writePEM(t, ca.file, "CERTIFICATE", der)
	return ca
}

// issue writes a certificate for name signed by the CA, with its key.
func (ca *testCA) issue(t *testing.T, dir, name string, usage x509.ExtKeyUsage, serial int64) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{usage}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, name+".pem"), filepath.Join(dir, name+"-key.pem")
	writePEM(t, certFile, "CERTIFICATE", der)
	writePEM(t, keyFile, "EC PRIVATE KEY", keyDER)
	return certFile, keyFile
}

// With a client CA (serve nats --tls-ca) the server admits only clients
// whose certificate that CA signed.
func TestEmbeddedMutualTLS(t *testing.T) {
	dir := t.TempDir()
	ca := newTestCA(t, dir)
	serverCert, serverKey := ca.issue(t, dir, "server", x509.ExtKeyUsageServerAuth, 2)
	clientCert, clientKey := ca.issue(t, dir, "client", x509.ExtKeyUsageClientAuth, 3)
	other := newTestCA(t, t.TempDir())
	strangerCert, strangerKey := other.issue(t, dir, "stranger", x509.ExtKeyUsageClientAuth, 4)
	e, err := streams.StartEmbedded(streams.EmbeddedConfig{StoreDir: t.TempDir(), Port: -1,
		TLSCert: serverCert, TLSKey: serverKey, TLSCA: ca.file})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Shutdown)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	nc, js, err := streams.Connect(ctx, e.ClientURL(), streams.ConnectOptions{TLSCA: ca.file, TLSCert: clientCert, TLSKey: clientKey})
	if err != nil {
		t.Fatalf("with a certificate the CA signed: %v", err)
	}
	if err := streams.Ensure(ctx, js, streams.Options{}); err != nil {
		t.Fatalf("Ensure over mutual TLS: %v", err)
	}
	nc.Close()
	for name, opts := range map[string]streams.ConnectOptions{
		"no client certificate":    {TLSCA: ca.file, Timeout: 2 * time.Second},
		"another CA's certificate": {TLSCA: ca.file, TLSCert: strangerCert, TLSKey: strangerKey, Timeout: 2 * time.Second},
	} {
		if nc, _, err := streams.Connect(ctx, e.ClientURL(), opts); err == nil {
			nc.Close()
			t.Errorf("%s: connected, want refused", name)
		}
	}
}
