package awsfake

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// PodIdentityPath is the path of EKS Pod Identity's agent credentials
// endpoint (http://169.254.170.23/v1/credentials in a Pod), served by the
// fake next to its other APIs.
const PodIdentityPath = "/v1/credentials"

// PodIdentityAudience is the audience of the ServiceAccount token EKS
// Pod Identity projects into the Pod and its agent accepts.
const PodIdentityAudience = "pods.eks.amazonaws.com"

// podIdentityCredentials is the agent's answer, the container credentials
// JSON the SDK's endpoint provider reads.
type podIdentityCredentials struct {
	AccessKeyID     string `json:"AccessKeyId"`
	SecretAccessKey string `json:"SecretAccessKey"`
	Token           string `json:"Token"`
	AccountID       string `json:"AccountId"`
	Expiration      string `json:"Expiration"`
}

// podIdentity answers the agent's GET: the Authorization header is the
// projected token, vetted by ReviewPodIdentity when set; credentials are
// issued as STS's are, so ECR and S3 accept them. Errors are the
// container credentials JSON shape ({"code", "message"}).
func (f *Fake) podIdentity(w http.ResponseWriter, r *http.Request) {
	req := Request{API: "pod-identity", Action: "GetCredentials", Token: r.Header.Get("Authorization")}
	f.mu.Lock()
	review := f.ReviewPodIdentity
	f.mu.Unlock()
	fail := func(status int, code, msg string) {
		f.add(req)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]string{"code": code, "message": msg})
	}
	switch {
	case r.Method != http.MethodGet:
		fail(http.StatusMethodNotAllowed, "InvalidRequest", "the credentials endpoint answers GET")
		return
	case req.Token == "":
		fail(http.StatusBadRequest, "InvalidTokenException", "no service account token in the Authorization header")
		return
	case review != nil:
		subject, err := review(req.Token)
		if err != nil {
			fail(http.StatusForbidden, "AccessDeniedException", err.Error())
			return
		}
		req.Subject = subject
	}
	f.add(req)
	creds, _ := f.issue()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(podIdentityCredentials{AccessKeyID: creds.AccessKeyID, SecretAccessKey: creds.SecretAccessKey,
		Token: creds.SessionToken, AccountID: "123456789012", Expiration: creds.Expiration})
}

// SetPodIdentityAs gives the test's process the controller identity EKS
// Pod Identity injects for the ServiceAccount ns/name, created here: a
// TokenRequest token of it for PodIdentityAudience in a file
// (AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE) and the agent's endpoint
// (AWS_CONTAINER_CREDENTIALS_FULL_URI), which vets the token with a
// TokenReview against the API server behind c. It returns the token.
func (f *Fake) SetPodIdentityAs(t *testing.T, c client.Client, ns, name string) string {
	t.Helper()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if err := c.Create(context.Background(), sa); err != nil {
		t.Fatal(err)
	}
	seconds := int64(time.Hour / time.Second)
	req := &authnv1.TokenRequest{Spec: authnv1.TokenRequestSpec{Audiences: []string{PodIdentityAudience}, ExpirationSeconds: &seconds}}
	if err := c.SubResource("token").Create(context.Background(), sa, req); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	f.ReviewPodIdentity = TokenReview(c, PodIdentityAudience)
	f.mu.Unlock()
	SetPodIdentityToken(t, f.URL()+PodIdentityPath, req.Status.Token)
	return req.Status.Token
}

// SetPodIdentityToken points the SDK's container credentials provider at
// endpoint with token in the file AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE
// names (rewritten by a later call, as kubelet rotates it).
func SetPodIdentityToken(t *testing.T, endpoint, token string) {
	t.Helper()
	t.Setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", endpoint)
	t.Setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", tokenFile(t, "eks-pod-identity-token", token))
}
