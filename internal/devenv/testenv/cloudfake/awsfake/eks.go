package awsfake

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	signerv4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// EKSCluster is a cluster the fake's EKS DescribeCluster describes.
type EKSCluster struct {
	// Endpoint is the API server's URL.
	Endpoint string
	// CA is the PEM of its certificate authority.
	CA []byte
}

// AddCluster makes DescribeCluster know the cluster name.
func (f *Fake) AddCluster(name string, c EKSCluster) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.clusters == nil {
		f.clusters = map[string]EKSCluster{}
	}
	f.clusters[name] = c
}

// eks answers DescribeCluster (GET /clusters/{name}), signed with issued
// credentials for service eks.
func (f *Fake) eks(w http.ResponseWriter, r *http.Request, req Request) {
	name := strings.TrimPrefix(r.URL.Path, "/clusters/")
	f.mu.Lock()
	session, issued := f.issued[req.AccessKeyID]
	c, known := f.clusters[name]
	f.mu.Unlock()
	switch {
	case r.Method != http.MethodGet || strings.Contains(name, "/"):
		restError(w, http.StatusNotFound, "NotFoundException", "no route for "+r.Method+" "+r.URL.Path)
	case req.Service != "eks":
		restError(w, http.StatusForbidden, "InvalidSignatureException", "Credential should be scoped to correct service: 'eks'.")
	case !issued || session != req.SessionToken:
		restError(w, http.StatusForbidden, "UnrecognizedClientException", "The security token included in the request is invalid.")
	case !known:
		restError(w, http.StatusNotFound, "ResourceNotFoundException", "No cluster found for name: "+name+".")
	default:
		arn := fmt.Sprintf("arn:aws:eks:%s:123456789012:cluster/%s", req.Region, name)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"cluster": map[string]any{
			"name": name, "arn": arn, "status": "ACTIVE", "endpoint": c.Endpoint,
			"certificateAuthority": map[string]string{"data": base64.StdEncoding.EncodeToString(c.CA)},
		}})
	}
}

func restError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-ErrorType", code)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"message": msg})
}

// CallerIdentity is who a presigned GetCallerIdentity says the caller is.
type CallerIdentity struct {
	// AccessKeyID is the key the request was signed with.
	AccessKeyID string
	// Region is the credential scope's region.
	Region string
	// Cluster is the signed x-k8s-aws-id header.
	Cluster string
}

// VerifyClusterToken checks an EKS bearer token the way EKS's
// authenticator does, against this fake's STS: "k8s-aws-v1." and a
// base64url URL of this fake presigning GetCallerIdentity (version
// 2011-06-15) for at most 900 seconds, whose signed headers include host
// and x-k8s-aws-id, signed (SigV4, recomputed here) with credentials the
// fake issued. It returns who signed it and for which cluster.
func (f *Fake) VerifyClusterToken(token string) (CallerIdentity, error) {
	raw, ok := strings.CutPrefix(token, "k8s-aws-v1.")
	if !ok {
		return CallerIdentity{}, errors.New("not a k8s-aws-v1 token")
	}
	b, err := base64.RawURLEncoding.DecodeString(raw)
	if err != nil {
		return CallerIdentity{}, errors.New("token is not base64url")
	}
	u, err := url.Parse(string(b))
	if err != nil || u.Scheme+"://"+u.Host != f.URL() {
		return CallerIdentity{}, errors.New("token is not a URL of this STS")
	}
	q := u.Query()
	signed := strings.Split(q.Get("X-Amz-SignedHeaders"), ";")
	expires, _ := strconv.Atoi(q.Get("X-Amz-Expires"))
	switch {
	case q.Get("Action") != "GetCallerIdentity" || q.Get("Version") != "2011-06-15":
		return CallerIdentity{}, errors.New("not a GetCallerIdentity 2011-06-15 request")
	case !slices.Contains(signed, "host") || !slices.Contains(signed, "x-k8s-aws-id"):
		return CallerIdentity{}, fmt.Errorf("signed headers %q lack host or x-k8s-aws-id", signed)
	case expires <= 0 || expires > 900:
		return CallerIdentity{}, fmt.Errorf("X-Amz-Expires %q is not in (0, 900]", q.Get("X-Amz-Expires"))
	}
	var id CallerIdentity
	scope := strings.Split(q.Get("X-Amz-Credential"), "/")
	if len(scope) != 5 || scope[3] != "sts" {
		return CallerIdentity{}, fmt.Errorf("credential scope %q is not sts's", q.Get("X-Amz-Credential"))
	}
	id.AccessKeyID, id.Region = scope[0], scope[2]
	secret, session, ok := f.Issued(id.AccessKeyID)
	if !ok || session != q.Get("X-Amz-Security-Token") {
		return CallerIdentity{}, errors.New("the security token included in the request is invalid")
	}
	// The cluster name is not in the URL: EKS sends the header it was
	// signed with. Try the clusters the fake knows.
	f.mu.Lock()
	names := make([]string, 0, len(f.clusters))
	for n := range f.clusters {
		names = append(names, n)
	}
	f.mu.Unlock()
	for _, name := range names {
		if presignedBy(u, name, aws.Credentials{AccessKeyID: id.AccessKeyID, SecretAccessKey: secret, SessionToken: session}, id.Region) {
			id.Cluster = name
			return id, nil
		}
	}
	return CallerIdentity{}, errors.New("the request signature does not match for any known cluster")
}

// presignedBy re-presigns u's request with creds and x-k8s-aws-id:
// cluster at the request's own time, and compares the signatures.
func presignedBy(u *url.URL, cluster string, creds aws.Credentials, region string) bool {
	q := u.Query()
	at, err := time.Parse("20060102T150405Z", q.Get("X-Amz-Date"))
	if err != nil {
		return false
	}
	want := q.Get("X-Amz-Signature")
	for _, k := range []string{"X-Amz-Signature", "X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Date", "X-Amz-SignedHeaders", "X-Amz-Security-Token"} {
		q.Del(k)
	}
	again := *u
	again.RawQuery = q.Encode()
	req, err := http.NewRequest(http.MethodGet, again.String(), nil)
	if err != nil {
		return false
	}
	req.Header.Set("x-k8s-aws-id", cluster)
	const emptyPayload = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
	signedURL, _, err := signerv4.NewSigner().PresignHTTP(context.Background(), creds, req, emptyPayload, "sts", region, at)
	if err != nil {
		return false
	}
	got, err := url.Parse(signedURL)
	return err == nil && got.Query().Get("X-Amz-Signature") == want
}

type callerIdentityResponse struct {
	XMLName xml.Name `xml:"GetCallerIdentityResponse"`
	Xmlns   string   `xml:"xmlns,attr"`
	Result  struct {
		Arn     string `xml:"Arn"`
		UserID  string `xml:"UserId"`
		Account string `xml:"Account"`
	} `xml:"GetCallerIdentityResult"`
	RequestID string `xml:"ResponseMetadata>RequestId"`
}

// callerIdentity answers a presigned GET GetCallerIdentity, as EKS's
// authenticator sends it on with the x-k8s-aws-id header.
func (f *Fake) callerIdentity(w http.ResponseWriter, r *http.Request) {
	id, err := f.VerifyClusterToken("k8s-aws-v1." + base64.RawURLEncoding.EncodeToString([]byte(f.URL()+r.URL.RequestURI())))
	if err == nil && id.Cluster != r.Header.Get("x-k8s-aws-id") {
		err = errors.New("x-k8s-aws-id is not the header the request was signed with")
	}
	if err != nil {
		w.Header().Set("Content-Type", "text/xml")
		w.WriteHeader(http.StatusForbidden)
		var e stsErrorResponse
		e.Xmlns, e.RequestID = stsNS, "req-error"
		e.Error.Type, e.Error.Code, e.Error.Message = "Sender", "SignatureDoesNotMatch", err.Error()
		_ = xml.NewEncoder(w).Encode(e)
		return
	}
	var resp callerIdentityResponse
	resp.Xmlns, resp.RequestID = stsNS, "req-caller"
	resp.Result.Account, resp.Result.UserID = "123456789012", id.AccessKeyID
	resp.Result.Arn = "arn:aws:sts::123456789012:assumed-role/fake/" + id.AccessKeyID
	w.Header().Set("Content-Type", "text/xml")
	_ = xml.NewEncoder(w).Encode(resp)
}
