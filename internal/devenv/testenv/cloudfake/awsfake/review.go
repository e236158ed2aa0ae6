package awsfake

import (
	"context"
	"errors"
	"slices"
	"testing"

	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/internal/devenv/testenv/ociregistry"
)

// TokenReview is a ReviewWebIdentity that asks the API server behind c
// whether a token is a ServiceAccount's for audience (as IAM's OIDC
// provider checks an EKS cluster's tokens), and names its user.
func TokenReview(c client.Client, audience string) func(string) (string, error) {
	return func(token string) (string, error) {
		r := &authnv1.TokenReview{Spec: authnv1.TokenReviewSpec{Token: token, Audiences: []string{audience}}}
		if err := c.Create(context.Background(), r); err != nil {
			return "", err
		}
		if !r.Status.Authenticated || !slices.Contains(r.Status.Audiences, audience) {
			return "", errors.New("couldn't verify the web identity token")
		}
		return r.Status.User.Username, nil
	}
}

// STSAudience is the audience of the ServiceAccount tokens AWS STS
// accepts as web identities (EKS's OIDC provider's).
const STSAudience = "sts.amazonaws.com"

// NewECR starts a Fake whose STS vets web identities with the API server
// behind c, points the SDK at it for the test, and starts a registry that
// accepts only the fake's ECR login, with a password unique to ns.
func NewECR(t *testing.T, c client.Client, ns string) (*Fake, *ociregistry.Registry) {
	t.Helper()
	fake := New(t)
	fake.RegistryPassword = "ecr-pass-" + ns
	fake.ReviewWebIdentity = TokenReview(c, STSAudience)
	fake.Setenv(t)
	return fake, ociregistry.New(t, ociregistry.Options{Username: "AWS", Password: fake.RegistryPassword})
}

// SetIRSAAs is SetIRSA for the ServiceAccount ns/name, created here: a
// TokenRequest token of it for STSAudience (which TokenReview accepts)
// and the role arn:aws:iam::123456789012:role/<name>.
func SetIRSAAs(t *testing.T, c client.Client, ns, name string) {
	t.Helper()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if err := c.Create(context.Background(), sa); err != nil {
		t.Fatal(err)
	}
	req := &authnv1.TokenRequest{Spec: authnv1.TokenRequestSpec{Audiences: []string{STSAudience}}}
	if err := c.SubResource("token").Create(context.Background(), sa, req); err != nil {
		t.Fatal(err)
	}
	SetIRSA(t, "arn:aws:iam::123456789012:role/"+name, req.Status.Token)
}
