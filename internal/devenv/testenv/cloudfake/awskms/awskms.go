// Package awskms is an AWS KMS and STS fake on 127.0.0.1 for the SOPS
// tests: KMS's JSON 1.1 protocol (X-Amz-Target TrentService.Encrypt,
// Decrypt, GenerateDataKey) with every request's SigV4 signature checked
// against the access keys it knows, the encryption context bound to the
// ciphertext as real KMS binds it, and STS's query protocol
// (AssumeRoleWithWebIdentity, AssumeRole) issuing session credentials the
// KMS half then accepts. Point the AWS SDK at it with
// AWS_ENDPOINT_URL_KMS and AWS_ENDPOINT_URL_STS (URL).
//
// Every request is recorded (Requests) with what the tests assert: the
// operation, the access key id and signing scope, the key, the encryption
// context, and for STS the role, session name and web identity token.
package awskms

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/kmscipher"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/reqlog"
)

// Request is one call the fake answered or refused.
type Request struct {
	// Operation is the KMS target (Encrypt, Decrypt, GenerateDataKey) or
	// the STS action (AssumeRoleWithWebIdentity, AssumeRole).
	Operation string
	// AccessKeyID, Region and Service are the SigV4 credential scope
	// (empty for the unsigned AssumeRoleWithWebIdentity).
	AccessKeyID, Region, Service string
	// KeyID and Context are a KMS call's key and encryption context.
	KeyID   string
	Context map[string]string
	// RoleARN, SessionName and WebIdentityToken are an STS call's.
	RoleARN, SessionName, WebIdentityToken string
	// Status is the HTTP status answered.
	Status int
}

// Server is the fake.
type Server struct {
	// URL is the base URL of both services.
	URL string

	ring     kmscipher.Ring
	mu       sync.Mutex
	secrets  map[string]string // access key id → secret access key
	log      reqlog.Log[Request]
	sessions int
}

// New starts the fake for the test's lifetime.
func New(t testing.TB) *Server {
	s := &Server{secrets: map[string]string{}}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// AddAccessKey makes an access key pair valid.
func (s *Server) AddAccessKey(id, secret string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.secrets[id] = secret
}

// Requests returns what the fake was asked so far.
func (s *Server) Requests() []Request { return s.log.All() }

func (s *Server) record(r Request) { s.log.Add(r) }

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if target := r.Header.Get("X-Amz-Target"); target != "" {
		s.serveKMS(w, r, body, target)
		return
	}
	s.serveSTS(w, r, body)
}

// authError is an AWS error answer: its code and message.
type authError struct {
	status  int
	code    string
	message string
}

// verify checks a request's SigV4 signature, returning its scope.
func (s *Server) verify(r *http.Request, body []byte, service string) (Request, *authError) {
	var rec Request
	auth := r.Header.Get("Authorization")
	cred, signed, ok := parseAuthorization(auth)
	if !ok {
		return rec, &authError{http.StatusBadRequest, "MissingAuthenticationToken", "Request is missing Authentication Token"}
	}
	scope := strings.Split(cred, "/")
	if len(scope) != 5 || scope[4] != "aws4_request" {
		return rec, &authError{http.StatusBadRequest, "IncompleteSignature", "malformed credential scope"}
	}
	rec.AccessKeyID, rec.Region, rec.Service = scope[0], scope[2], scope[3]
	if rec.Service != service {
		return rec, &authError{http.StatusBadRequest, "InvalidSignatureException", "credential scope names service " + rec.Service}
	}
	s.mu.Lock()
	secret, known := s.secrets[rec.AccessKeyID]
	s.mu.Unlock()
	if !known {
		return rec, &authError{http.StatusBadRequest, "UnrecognizedClientException", "The security token included in the request is invalid."}
	}
	if !signatureMatches(r, body, signed, rec, secret, auth) {
		return rec, &authError{http.StatusBadRequest, "InvalidSignatureException",
			"The request signature we calculated does not match the signature you provided."}
	}
	return rec, nil
}

// parseAuthorization splits "AWS4-HMAC-SHA256 Credential=…, SignedHeaders=…,
// Signature=…".
func parseAuthorization(h string) (cred string, signed []string, ok bool) {
	rest, found := strings.CutPrefix(h, "AWS4-HMAC-SHA256 ")
	if !found {
		return "", nil, false
	}
	for _, part := range strings.Split(rest, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "Credential":
			cred = v
		case "SignedHeaders":
			signed = strings.Split(v, ";")
		}
	}
	return cred, signed, cred != "" && len(signed) > 0
}

// signatureMatches signs a copy of the request holding only the headers
// the client signed, with the known secret, and compares.
func signatureMatches(r *http.Request, body []byte, signed []string, rec Request, secret, auth string) bool {
	at, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil {
		return false
	}
	u := *r.URL
	u.Scheme, u.Host = "http", r.Host
	req, err := http.NewRequest(r.Method, u.String(), bytes.NewReader(body))
	if err != nil {
		return false
	}
	req.ContentLength = int64(len(body))
	for _, h := range signed {
		switch h {
		case "host", "content-length":
			continue
		}
		req.Header[http.CanonicalHeaderKey(h)] = r.Header.Values(h)
	}
	req.Header.Del("Authorization")
	creds := aws.Credentials{AccessKeyID: rec.AccessKeyID, SecretAccessKey: secret, SessionToken: r.Header.Get("X-Amz-Security-Token")}
	hash := r.Header.Get("X-Amz-Content-Sha256")
	if hash == "" {
		hash = sha256Hex(body)
	}
	if err := v4.NewSigner().SignHTTP(r.Context(), creds, req, hash, rec.Service, rec.Region, at); err != nil {
		return false
	}
	return signature(req.Header.Get("Authorization")) == signature(auth)
}

func signature(auth string) string {
	_, sig, _ := strings.Cut(auth, "Signature=")
	return sig
}

func writeJSONError(w http.ResponseWriter, e *authError) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.WriteHeader(e.status)
	_ = json.NewEncoder(w).Encode(map[string]string{"__type": e.code, "message": e.message})
}

// kmsRequest is the body of the KMS calls the fake answers.
type kmsRequest struct {
	KeyID             string            `json:"KeyId"`
	Plaintext         []byte            `json:"Plaintext"`
	CiphertextBlob    []byte            `json:"CiphertextBlob"`
	EncryptionContext map[string]string `json:"EncryptionContext"`
	NumberOfBytes     int               `json:"NumberOfBytes"`
}

func (s *Server) serveKMS(w http.ResponseWriter, r *http.Request, body []byte, target string) {
	op, _ := strings.CutPrefix(target, "TrentService.")
	rec, aerr := s.verify(r, body, "kms")
	rec.Operation = op
	var in kmsRequest
	if aerr == nil {
		if err := json.Unmarshal(body, &in); err != nil {
			aerr = &authError{http.StatusBadRequest, "SerializationException", "malformed request body"}
		}
	}
	rec.KeyID, rec.Context = in.KeyID, in.EncryptionContext
	var out map[string]any
	if aerr == nil {
		out, aerr = s.kms(op, in)
	}
	if aerr != nil {
		rec.Status = aerr.status
		s.record(rec)
		writeJSONError(w, aerr)
		return
	}
	rec.Status = http.StatusOK
	s.record(rec)
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	_ = json.NewEncoder(w).Encode(out)
}

func (s *Server) kms(op string, in kmsRequest) (map[string]any, *authError) {
	aad := contextAAD(in.EncryptionContext)
	switch op {
	case "Encrypt":
		if in.KeyID == "" {
			return nil, &authError{http.StatusBadRequest, "ValidationException", "KeyId is required"}
		}
		return map[string]any{"KeyId": in.KeyID, "CiphertextBlob": s.ring.Seal(in.KeyID, in.Plaintext, aad),
			"EncryptionAlgorithm": "SYMMETRIC_DEFAULT"}, nil
	case "GenerateDataKey":
		plain := make([]byte, max(in.NumberOfBytes, 32))
		copy(plain, "weir-fake-data-key")
		return map[string]any{"KeyId": in.KeyID, "Plaintext": plain, "CiphertextBlob": s.ring.Seal(in.KeyID, plain, aad)}, nil
	case "Decrypt":
		key, plain, err := s.ring.Open(in.CiphertextBlob, aad)
		if err != nil {
			return nil, &authError{http.StatusBadRequest, "InvalidCiphertextException", ""}
		}
		if in.KeyID != "" && in.KeyID != key {
			return nil, &authError{http.StatusBadRequest, "IncorrectKeyException",
				"The key ID in the request does not identify a CMK that can perform this operation."}
		}
		return map[string]any{"KeyId": key, "Plaintext": plain, "EncryptionAlgorithm": "SYMMETRIC_DEFAULT"}, nil
	}
	return nil, &authError{http.StatusBadRequest, "UnknownOperationException", op}
}

// contextAAD is the encryption context in a canonical order.
func contextAAD(ctx map[string]string) []byte {
	keys := make([]string, 0, len(ctx))
	for k := range ctx {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%q=%q;", k, ctx[k])
	}
	return []byte(b.String())
}

// b64 is base64 for the STS answers' session tokens.
func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
