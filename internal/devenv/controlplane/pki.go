package controlplane

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pki holds the certificates and keys of one control plane, written as PEM
// files into its directory.
type pki struct {
	dir        string
	caCert     *x509.Certificate
	caKey      crypto.Signer
	CAFile     string
	ServerCert string
	ServerKey  string
	AdminCert  string
	AdminKey   string
	SAKey      string
	SAPub      string
}

func newPKI(dir string) (*pki, error) {
	p := &pki{dir: dir}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating CA key: %w", err)
	}
	now := time.Now()
	caTemplate := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "weir-local-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTemplate, caTemplate, caKey.Public(), caKey)
	if err != nil {
		return nil, fmt.Errorf("signing CA certificate: %w", err)
	}
	if p.caCert, err = x509.ParseCertificate(caDER); err != nil {
		return nil, fmt.Errorf("parsing CA certificate: %w", err)
	}
	p.caKey = caKey
	if p.CAFile, err = writePEM(dir, "ca.crt", "CERTIFICATE", caDER); err != nil {
		return nil, err
	}

	server := &x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver"},
		DNSNames:    []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1"), net.ParseIP("10.0.0.1")},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if p.ServerCert, p.ServerKey, err = p.issue("server", server); err != nil {
		return nil, err
	}
	admin := &x509.Certificate{
		Subject:     pkix.Name{CommonName: "weir-admin", Organization: []string{"system:masters"}},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if p.AdminCert, p.AdminKey, err = p.issue("admin", admin); err != nil {
		return nil, err
	}

	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating service account key: %w", err)
	}
	if p.SAKey, err = writeKey(dir, "sa.key", saKey); err != nil {
		return nil, err
	}
	pubDER, err := x509.MarshalPKIXPublicKey(saKey.Public())
	if err != nil {
		return nil, fmt.Errorf("encoding service account public key: %w", err)
	}
	if p.SAPub, err = writePEM(dir, "sa.pub", "PUBLIC KEY", pubDER); err != nil {
		return nil, err
	}
	return p, nil
}

// issue signs template with the CA and writes <name>.crt and <name>.key.
func (p *pki) issue(name string, template *x509.Certificate) (certFile, keyFile string, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", fmt.Errorf("generating %s key: %w", name, err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return "", "", fmt.Errorf("generating serial: %w", err)
	}
	template.SerialNumber = serial
	template.NotBefore = p.caCert.NotBefore
	template.NotAfter = p.caCert.NotAfter
	template.KeyUsage = x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment
	der, err := x509.CreateCertificate(rand.Reader, template, p.caCert, key.Public(), p.caKey)
	if err != nil {
		return "", "", fmt.Errorf("signing %s certificate: %w", name, err)
	}
	if certFile, err = writePEM(p.dir, name+".crt", "CERTIFICATE", der); err != nil {
		return "", "", err
	}
	if keyFile, err = writeKey(p.dir, name+".key", key); err != nil {
		return "", "", err
	}
	return certFile, keyFile, nil
}

func writeKey(dir, name string, key *ecdsa.PrivateKey) (string, error) {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return "", fmt.Errorf("encoding %s: %w", name, err)
	}
	return writePEM(dir, name, "EC PRIVATE KEY", der)
}

func writePEM(dir, name, blockType string, der []byte) (string, error) {
	file := filepath.Join(dir, name)
	data := pem.EncodeToMemory(&pem.Block{Type: blockType, Bytes: der})
	if err := os.WriteFile(file, data, 0o600); err != nil {
		return "", fmt.Errorf("writing %s: %w", name, err)
	}
	return file, nil
}
