package s3server

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// sigV4Algorithm is the only Authorization scheme the verifier accepts.
const sigV4Algorithm = "AWS4-HMAC-SHA256"

// verifier refuses requests that are not signed with its key pair, then
// hands the rest to next. It implements the server side of AWS Signature
// Version 4 for header-signed requests (see doc.go for what it leaves out).
type verifier struct {
	keys     func(accessKeyID string) (secretKey, sessionToken string, ok bool)
	next     http.Handler
	denied   *atomic.Int64
	accepted *acceptedKeys
}

// acceptedKeys records the access keys of accepted requests.
type acceptedKeys struct {
	mu   sync.Mutex
	seen []string
}

func (a *acceptedKeys) add(id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !slices.Contains(a.seen, id) {
		a.seen = append(a.seen, id)
	}
}

func (a *acceptedKeys) list() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.seen)
}

// s3Error is the XML body S3 sends with an error status.
type s3Error struct {
	XMLName  xml.Name `xml:"Error"`
	Code     string   `xml:"Code"`
	Message  string   `xml:"Message"`
	Resource string   `xml:"Resource"`
}

func (v *verifier) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	code, msg := v.check(r)
	if code != "" {
		v.denied.Add(1)
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusForbidden)
		if r.Method != http.MethodHead {
			_, _ = w.Write([]byte(xml.Header))
			_ = xml.NewEncoder(w).Encode(s3Error{Code: code, Message: msg, Resource: r.URL.Path})
		}
		return
	}
	v.accepted.add(msg)
	v.next.ServeHTTP(w, r)
}

// check returns an S3 error code and message when r is not properly
// signed, or "" and the access key id when it is.
func (v *verifier) check(r *http.Request) (code, message string) {
	auth, ok := parseAuthorization(r.Header.Get("Authorization"))
	if !ok {
		return "AccessDenied", "Access Denied"
	}
	scope := strings.Split(auth.credential, "/")
	if len(scope) != 5 || scope[3] != "s3" || scope[4] != "aws4_request" {
		return "AccessDenied", "Access Denied"
	}
	secretKey, sessionToken, known := v.keys(scope[0])
	if !known {
		return "InvalidAccessKeyId", "The AWS Access Key Id you provided does not exist in our records."
	}
	// Temporary credentials are only valid with their session token, and
	// the token is part of what was signed.
	if got := r.Header.Get("X-Amz-Security-Token"); got != sessionToken ||
		sessionToken != "" && !slices.Contains(auth.signedHeaders, "x-amz-security-token") {
		return "InvalidToken", "The provided token is malformed or otherwise invalid."
	}
	amzDate := r.Header.Get("X-Amz-Date")
	if len(amzDate) < 8 || amzDate[:8] != scope[1] {
		return "AccessDenied", "Access Denied"
	}
	canonical := canonicalRequest(r, auth.signedHeaders)
	stringToSign := strings.Join([]string{
		sigV4Algorithm, amzDate, strings.Join(scope[1:], "/"), hexSHA256(canonical),
	}, "\n")
	key := hmacSHA256([]byte("AWS4"+secretKey), scope[1])
	for _, part := range scope[2:] {
		key = hmacSHA256(key, part)
	}
	want := hex.EncodeToString(hmacSHA256(key, stringToSign))
	if !hmac.Equal([]byte(want), []byte(auth.signature)) {
		return "SignatureDoesNotMatch", "The request signature we calculated does not match the signature you provided. Check your key and signing method."
	}
	return "", scope[0]
}

type authorization struct {
	credential    string
	signedHeaders []string
	signature     string
}

// parseAuthorization reads
// "AWS4-HMAC-SHA256 Credential=…, SignedHeaders=a;b, Signature=…".
func parseAuthorization(h string) (authorization, bool) {
	var a authorization
	rest, ok := strings.CutPrefix(h, sigV4Algorithm+" ")
	if !ok {
		return a, false
	}
	for _, field := range strings.Split(rest, ",") {
		k, val, _ := strings.Cut(strings.TrimSpace(field), "=")
		switch k {
		case "Credential":
			a.credential = val
		case "SignedHeaders":
			a.signedHeaders = strings.Split(val, ";")
		case "Signature":
			a.signature = val
		}
	}
	return a, a.credential != "" && len(a.signedHeaders) > 0 && a.signature != ""
}

// canonicalRequest is the string whose hash a SigV4 client signed: method,
// URI-encoded path, sorted and encoded query, the signed headers with
// trimmed values, their names, and the payload hash the client declared.
func canonicalRequest(r *http.Request, signed []string) string {
	var headers strings.Builder
	for _, name := range signed {
		headers.WriteString(name + ":" + headerValue(r, name) + "\n")
	}
	payload := r.Header.Get("X-Amz-Content-Sha256")
	if payload == "" {
		payload = "UNSIGNED-PAYLOAD"
	}
	return strings.Join([]string{
		r.Method,
		uriEncode(r.URL.Path, false),
		canonicalQuery(r.URL.Query()),
		headers.String(),
		strings.Join(signed, ";"),
		payload,
	}, "\n")
}

// headerValue is a header as the client saw it before sending: Go's server
// moves Host (and may move Content-Length) out of the header map.
func headerValue(r *http.Request, name string) string {
	switch name {
	case "host":
		return r.Host
	case "content-length":
		if v := r.Header.Get("Content-Length"); v != "" {
			return v
		}
		return strconv.FormatInt(r.ContentLength, 10)
	}
	vals := append([]string(nil), r.Header.Values(name)...)
	for i, v := range vals {
		vals[i] = strings.Join(strings.Fields(v), " ")
	}
	return strings.Join(vals, ",")
}

func canonicalQuery(q url.Values) string {
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		vals := append([]string(nil), q[k]...)
		sort.Strings(vals)
		for _, v := range vals {
			parts = append(parts, uriEncode(k, true)+"="+uriEncode(v, true))
		}
	}
	return strings.Join(parts, "&")
}

// uriEncode percent-encodes every byte but the unreserved characters
// (A-Z a-z 0-9 - _ . ~) and, unless encodeSlash, '/'.
func uriEncode(s string, encodeSlash bool) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9',
			c == '-', c == '_', c == '.', c == '~', c == '/' && !encodeSlash:
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&0xf])
		}
	}
	return b.String()
}

func hmacSHA256(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}

func hexSHA256(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
