package eventhubfake

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"sync"
	"testing"
	"time"
)

// Credentials are what the fake accepts: a shared access key by its
// policy name, and a JWT.
type Credentials struct {
	KeyName, Key string
	JWT          string
	// Bearers are further JWTs the namespace trusts, each naming the
	// identity it was issued to (an Entra fake's access tokens for
	// Event Hubs), recorded as PutToken.Principal.
	Bearers map[string]string
}

// PutToken is one put-token request the $cbs node answered, without the
// token.
type PutToken struct {
	// Type is servicebus.windows.net:sastoken or jwt.
	Type string
	// Audience is the name property: amqps://HOST/HUB.
	Audience string
	// KeyName is the SAS token's skn.
	KeyName string
	// Principal is the identity of an accepted JWT from Bearers.
	Principal string
	// Status is the answer: 202, or 401.
	Status int32
}

// Message is one event a hub received.
type Message struct {
	// Hub is the sender link's target address: the event hub's name.
	Hub string
	// Data is the message's data sections, joined.
	Data []byte
	// MessageID is the properties section's message-id.
	MessageID any
	// ContentType is the properties section's content-type.
	ContentType string
	// ApplicationProperties are the message's application properties.
	ApplicationProperties Map
}

// Server is a running fake.
type Server struct {
	// Addr is the listener's 127.0.0.1:PORT: connection strings name it
	// as Endpoint=sb://ADDR/.
	Addr string

	ln     net.Listener
	caPEM  []byte
	pool   *x509.CertPool
	mu     sync.Mutex
	creds  Credentials
	tokens []PutToken
	msgs   []Message
	wg     sync.WaitGroup
}

// Start serves a fake accepting creds until the test ends.
func Start(t testing.TB, creds Credentials) *Server {
	t.Helper()
	cert, pool, caPEM, err := newCertificate()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert},
		MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Addr: ln.Addr().String(), ln: ln, caPEM: caPEM, pool: pool, creds: creds}
	s.wg.Add(1)
	go s.accept()
	t.Cleanup(s.close)
	return s
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			newConn(s, c).serve()
		}()
	}
}

func (s *Server) close() {
	_ = s.ln.Close()
	s.wg.Wait()
}

// CAPEM is the certificate the fake serves, to trust (a Provider's
// certSecretRef ca.crt).
func (s *Server) CAPEM() []byte { return s.caPEM }

// ClientTLS is a TLS configuration trusting the fake. It names the
// server 127.0.0.1: go-amqp would otherwise check the certificate against
// the connection string's host with its port.
func (s *Server) ClientTLS() *tls.Config {
	return &tls.Config{RootCAs: s.pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
}

// SetCredentials replaces what the fake accepts.
func (s *Server) SetCredentials(c Credentials) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.creds = c
}

// Tokens returns the put-token requests answered so far.
func (s *Server) Tokens() []PutToken {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]PutToken(nil), s.tokens...)
}

// Messages returns the events received so far.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.msgs...)
}

func (s *Server) credentials() Credentials {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.creds
}

func (s *Server) recordToken(p PutToken) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens = append(s.tokens, p)
}

func (s *Server) recordMessages(m []Message) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.msgs = append(s.msgs, m...)
}

// newCertificate returns a self-signed certificate for 127.0.0.1 and
// localhost, the pool trusting it and its PEM.
func newCertificate() (tls.Certificate, *x509.CertPool, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "eventhubfake"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, BasicConstraintsValid: true, IsCA: true,
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, nil, nil, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, nil, nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if caPEM == nil {
		return tls.Certificate{}, nil, nil, errors.New("encoding the certificate")
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool, caPEM, nil
}
