package awsfake

import (
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Request is one call the fake received.
type Request struct {
	// API is "sts", "ecr", "ecr-public", "eks" or "pod-identity".
	API string
	// Action is the STS Action or the JSON target's operation.
	Action string
	// Form is the STS request's form (RoleArn, RoleSessionName,
	// WebIdentityToken, Version).
	Form url.Values
	// Scope is the SigV4 credential scope of a signed call:
	// <key>/<date>/<region>/<service>/aws4_request; empty when unsigned.
	Scope string
	// AccessKeyID and Region, Service are Scope's parts.
	AccessKeyID, Region, Service string
	// SessionToken is the X-Amz-Security-Token header.
	SessionToken string
	// Subject is whose web identity token an STS call presented, as
	// ReviewWebIdentity (or ReviewPodIdentity) said.
	Subject string
	// Token is the Authorization header of a pod-identity call: the
	// projected ServiceAccount token the agent was shown.
	Token string
}

// Fake is the server. Set its fields before the first request.
type Fake struct {
	// RegistryPassword is the password the ECR tokens carry (user AWS).
	RegistryPassword string
	// Lifetime is how long issued credentials and tokens last; one hour
	// when zero.
	Lifetime time.Duration
	// ReviewWebIdentity, when set, vets an AssumeRoleWithWebIdentity's
	// token and names its subject (see TokenReview); an error answers
	// InvalidIdentityToken.
	ReviewWebIdentity func(token string) (subject string, err error)
	// ReviewPodIdentity, when set, vets the token the EKS Pod Identity
	// agent endpoint is shown (see SetPodIdentityAs); an error answers
	// 403 AccessDeniedException.
	ReviewPodIdentity func(token string) (subject string, err error)
	// LDAPUsers are the username → password pairs MinIO's
	// AssumeRoleWithLDAPIdentity accepts (see ldap.go).
	LDAPUsers map[string]string

	server *httptest.Server
	mu     sync.Mutex
	reqs   []Request
	issued map[string]string // access key id → session token
	n      int

	clusters map[string]EKSCluster // by name (eks.go)
}

// New starts a Fake on 127.0.0.1 and stops it when the test ends.
func New(t testing.TB) *Fake {
	t.Helper()
	f := &Fake{RegistryPassword: "ecr-password", issued: map[string]string{}}
	f.server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.server.Close)
	return f
}

// URL is the fake's base URL.
func (f *Fake) URL() string { return f.server.URL }

// Env is the environment that points the AWS SDK at the fake and keeps it
// off the instance metadata service.
func (f *Fake) Env() map[string]string {
	return map[string]string{
		"AWS_ENDPOINT_URL_STS":        f.URL(),
		"AWS_ENDPOINT_URL_ECR":        f.URL(),
		"AWS_ENDPOINT_URL_ECR_PUBLIC": f.URL(),
		"AWS_ENDPOINT_URL_EKS":        f.URL(),
		"AWS_EC2_METADATA_DISABLED":   "true",
	}
}

// Setenv sets Env for the test (which therefore cannot run in parallel).
func (f *Fake) Setenv(t *testing.T) {
	for k, v := range f.Env() {
		t.Setenv(k, v)
	}
}

// Requests returns the calls received so far, filtered by api when not
// empty.
func (f *Fake) Requests(api string) []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Request
	for _, r := range f.reqs {
		if api == "" || r.API == api {
			out = append(out, r)
		}
	}
	return out
}

// Trust makes the fake accept a key it did not issue (static controller
// keys, say).
func (f *Fake) Trust(accessKeyID, sessionToken string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.issued[accessKeyID] = sessionToken
}

// Issued answers the secret key and session token of an access key id its
// STS issued, for an S3 server that must accept only those
// (s3server.Options.Keys).
func (f *Fake) Issued(accessKeyID string) (secretKey, sessionToken string, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	session, ok := f.issued[accessKeyID]
	if !ok || !strings.HasPrefix(accessKeyID, issuedPrefix) {
		return "", "", false
	}
	return issuedSecret(accessKeyID), session, true
}

// issuedPrefix starts the access key ids the fake's STS issues; their
// secret key is issuedSecret's.
const issuedPrefix = "ASIAFAKE"

func issuedSecret(accessKeyID string) string { return "secret-" + accessKeyID }

func (f *Fake) lifetime() time.Duration {
	if f.Lifetime > 0 {
		return f.Lifetime
	}
	return time.Hour
}

func (f *Fake) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	req := Request{SessionToken: r.Header.Get("X-Amz-Security-Token")}
	parseScope(r.Header.Get("Authorization"), &req)
	target := r.Header.Get("X-Amz-Target")
	switch {
	case r.Method == http.MethodGet && r.URL.Query().Get("Action") == "GetCallerIdentity":
		q := r.URL.Query()
		parseScope("Credential="+q.Get("X-Amz-Credential"), &req)
		req.API, req.Action, req.SessionToken = "sts", "GetCallerIdentity", q.Get("X-Amz-Security-Token")
		f.add(req)
		f.callerIdentity(w, r)
		return
	case r.URL.Path == PodIdentityPath:
		f.podIdentity(w, r)
		return
	case strings.HasPrefix(r.URL.Path, "/clusters/"):
		req.API, req.Action = "eks", "DescribeCluster"
		f.add(req)
		f.eks(w, r, req)
		return
	case strings.HasPrefix(target, "AmazonEC2ContainerRegistry_V20150921."):
		req.API, req.Action = "ecr", strings.TrimPrefix(target, "AmazonEC2ContainerRegistry_V20150921.")
	case strings.HasPrefix(target, "SpencerFrontendService."):
		req.API, req.Action = "ecr-public", strings.TrimPrefix(target, "SpencerFrontendService.")
	default:
		form, _ := url.ParseQuery(string(body))
		req.API, req.Action, req.Form = "sts", form.Get("Action"), form
	}
	f.mu.Lock()
	f.reqs = append(f.reqs, req)
	i := len(f.reqs) - 1
	f.mu.Unlock()
	if req.API == "sts" {
		f.sts(w, req, i)
		return
	}
	f.ecr(w, req)
}

func (f *Fake) add(req Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reqs = append(f.reqs, req)
}

// parseScope reads "AWS4-HMAC-SHA256 Credential=<scope>, SignedHeaders=…".
func parseScope(authz string, req *Request) {
	_, rest, ok := strings.Cut(authz, "Credential=")
	if !ok {
		return
	}
	req.Scope, _, _ = strings.Cut(rest, ",")
	parts := strings.Split(req.Scope, "/")
	if len(parts) == 5 {
		req.AccessKeyID, req.Region, req.Service = parts[0], parts[2], parts[3]
	}
}

const stsNS = "https://sts.amazonaws.com/doc/2011-06-15/"

type stsCredentials struct {
	AccessKeyID     string `xml:"AccessKeyId"`
	SecretAccessKey string `xml:"SecretAccessKey"`
	SessionToken    string `xml:"SessionToken"`
	Expiration      string `xml:"Expiration"`
}

type assumeRoleResponse struct {
	XMLName xml.Name `xml:"AssumeRoleWithWebIdentityResponse"`
	Xmlns   string   `xml:"xmlns,attr"`
	Result  struct {
		Credentials                 stsCredentials `xml:"Credentials"`
		SubjectFromWebIdentityToken string         `xml:"SubjectFromWebIdentityToken"`
		AssumedRoleUser             struct {
			Arn           string `xml:"Arn"`
			AssumedRoleID string `xml:"AssumedRoleId"`
		} `xml:"AssumedRoleUser"`
	} `xml:"AssumeRoleWithWebIdentityResult"`
	RequestID string `xml:"ResponseMetadata>RequestId"`
}

func (f *Fake) sts(w http.ResponseWriter, req Request, i int) {
	form := req.Form
	switch {
	case req.Action == ldapAction:
		f.ldap(w, req)
		return
	case req.Action != "AssumeRoleWithWebIdentity":
		stsError(w, "InvalidAction", "Could not find operation "+req.Action+" for version "+form.Get("Version"))
		return
	case form.Get("Version") != "2011-06-15":
		stsError(w, "InvalidParameterValue", "unsupported version")
		return
	case form.Get("RoleArn") == "" || form.Get("RoleSessionName") == "" || form.Get("WebIdentityToken") == "":
		stsError(w, "MissingParameter", "RoleArn, RoleSessionName and WebIdentityToken are required")
		return
	}
	f.mu.Lock()
	review := f.ReviewWebIdentity
	f.mu.Unlock()
	if review != nil {
		subject, err := review(form.Get("WebIdentityToken"))
		if err != nil {
			stsError(w, "InvalidIdentityToken", err.Error())
			return
		}
		f.mu.Lock()
		f.reqs[i].Subject = subject
		f.mu.Unlock()
	}
	creds, n := f.issue()
	var resp assumeRoleResponse
	resp.Xmlns, resp.RequestID = stsNS, fmt.Sprintf("req-%d", n)
	resp.Result.Credentials = creds
	resp.Result.SubjectFromWebIdentityToken = "system:serviceaccount"
	resp.Result.AssumedRoleUser.Arn = form.Get("RoleArn") + "/" + form.Get("RoleSessionName")
	resp.Result.AssumedRoleUser.AssumedRoleID = "AROAFAKE:" + form.Get("RoleSessionName")
	w.Header().Set("Content-Type", "text/xml")
	_ = xml.NewEncoder(w).Encode(resp)
}

// issue makes and remembers a new set of temporary credentials, numbered.
func (f *Fake) issue() (stsCredentials, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	key, session := fmt.Sprintf("%s%08d", issuedPrefix, f.n), fmt.Sprintf("session-%d", f.n)
	f.issued[key] = session
	return stsCredentials{
		AccessKeyID: key, SecretAccessKey: issuedSecret(key), SessionToken: session,
		Expiration: time.Now().Add(f.lifetime()).UTC().Format(time.RFC3339),
	}, f.n
}

type stsErrorResponse struct {
	XMLName xml.Name `xml:"ErrorResponse"`
	Xmlns   string   `xml:"xmlns,attr"`
	Error   struct {
		Type    string `xml:"Type"`
		Code    string `xml:"Code"`
		Message string `xml:"Message"`
	} `xml:"Error"`
	RequestID string `xml:"RequestId"`
}

// stsError answers a Sender fault (400), as STS does for bad input.
func stsError(w http.ResponseWriter, code, msg string) {
	var e stsErrorResponse
	e.Xmlns, e.RequestID = stsNS, "req-error"
	e.Error.Type, e.Error.Code, e.Error.Message = "Sender", code, msg
	w.Header().Set("Content-Type", "text/xml")
	w.WriteHeader(http.StatusBadRequest)
	_ = xml.NewEncoder(w).Encode(e)
}

func (f *Fake) ecr(w http.ResponseWriter, req Request) {
	if req.Action != "GetAuthorizationToken" {
		jsonError(w, http.StatusBadRequest, "UnknownOperationException", "unknown operation "+req.Action)
		return
	}
	if req.Service != req.API {
		jsonError(w, http.StatusForbidden, "InvalidSignatureException", "Credential should be scoped to correct service: '"+req.API+"'.")
		return
	}
	f.mu.Lock()
	session, ok := f.issued[req.AccessKeyID]
	f.mu.Unlock()
	if !ok || session != req.SessionToken {
		jsonError(w, http.StatusForbidden, "UnrecognizedClientException", "The security token included in the request is invalid.")
		return
	}
	data := map[string]any{
		"authorizationToken": base64.StdEncoding.EncodeToString([]byte("AWS:" + f.RegistryPassword)),
		"expiresAt":          float64(time.Now().Add(f.lifetime()).Unix()),
	}
	var out map[string]any
	if req.API == "ecr-public" {
		out = map[string]any{"authorizationData": data}
	} else {
		data["proxyEndpoint"] = "https://ecr.example"
		out = map[string]any{"authorizationData": []any{data}}
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	_ = json.NewEncoder(w).Encode(out)
}

func jsonError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.Header().Set("X-Amzn-ErrorType", code)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"__type": code, "message": msg})
}

// SetIRSA gives the test's process the controller identity EKS's IRSA
// webhook injects: a projected token in a file and the role to assume
// (AWS_WEB_IDENTITY_TOKEN_FILE, AWS_ROLE_ARN).
func SetIRSA(t *testing.T, roleARN, token string) {
	t.Helper()
	t.Setenv("AWS_WEB_IDENTITY_TOKEN_FILE", tokenFile(t, "token", token))
	t.Setenv("AWS_ROLE_ARN", roleARN)
}

// tokenFile writes token to a file named name in the test's directory.
func tokenFile(t *testing.T, name, token string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(file, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}
