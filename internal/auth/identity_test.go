package auth_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/weir-gitops/weir/internal/auth"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
)

func TestMain(m *testing.M) {
	ctrllog.SetLogger(logr.Discard())
	testenv.Main(m, testenv.APIServerOnly)
}

func TestIdentityFor(t *testing.T) {
	tests := []struct {
		name     string
		settings *auth.Settings
		sa       string
		want     string
		wantErr  error
	}{
		{"no gate, no name: the controller", &auth.Settings{}, "", "controller", nil},
		{"no gate, a name: refused", &auth.Settings{}, "tenant", "", auth.ErrObjectLevelDisabled},
		{"nil settings, a name: refused", nil, "tenant", "", auth.ErrObjectLevelDisabled},
		{"gate, a name", &auth.Settings{ObjectLevel: true}, "tenant", "serviceaccount/apps/tenant", nil},
		{"gate, no name, no default: the controller", &auth.Settings{ObjectLevel: true}, "", "controller", nil},
		{"gate, no name, lockdown default", &auth.Settings{ObjectLevel: true, DefaultServiceAccount: "default"}, "", "serviceaccount/apps/default", nil},
		{"gate, a name beats the default", &auth.Settings{ObjectLevel: true, DefaultServiceAccount: "default"}, "tenant", "serviceaccount/apps/tenant", nil},
		{"no gate, default ignored", &auth.Settings{DefaultServiceAccount: "default"}, "", "controller", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, err := tt.settings.IdentityFor("apps", tt.sa)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if err == nil && id.String() != tt.want {
				t.Errorf("identity = %s, want %s", id, tt.want)
			}
		})
	}
	if got := auth.ErrObjectLevelDisabled.Error(); got != "ObjectLevelWorkloadIdentity feature gate is not enabled" {
		t.Errorf("message = %q, not Flux's", got)
	}
}

// TestServiceAccountTokenAgainstTheAPIServer asks the real API server for
// a token of a ServiceAccount bound to an audience, and checks the API
// server itself says the token is that ServiceAccount's, for that
// audience (TokenReview).
func TestServiceAccountTokenAgainstTheAPIServer(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	ctx := context.Background()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tenant",
		Annotations: map[string]string{"eks.amazonaws.com/role-arn": "arn:aws:iam::123456789012:role/tenant"}}}
	if err := env.Client.Create(ctx, sa); err != nil {
		t.Fatal(err)
	}
	s := &auth.Settings{ObjectLevel: true, Client: env.Client}
	id, err := s.IdentityFor(ns, "tenant")
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.ServiceAccount(ctx, id)
	if err != nil || got.Annotations["eks.amazonaws.com/role-arn"] == "" {
		t.Fatalf("ServiceAccount = %v, %v", got, err)
	}
	tok, err := s.ServiceAccountToken(ctx, id, "sts.amazonaws.com")
	if err != nil {
		t.Fatal(err)
	}
	if tok.Value == "" || tok.ExpiresAt.IsZero() {
		t.Fatalf("token = %v", tok)
	}
	review := &authnv1.TokenReview{Spec: authnv1.TokenReviewSpec{Token: tok.Value, Audiences: []string{"sts.amazonaws.com"}}}
	if err := env.Client.Create(ctx, review); err != nil {
		t.Fatal(err)
	}
	if !review.Status.Authenticated {
		t.Fatalf("the API server does not accept the token: %s", review.Status.Error)
	}
	if want := "system:serviceaccount:" + ns + ":tenant"; review.Status.User.Username != want {
		t.Errorf("token is %s's, want %s", review.Status.User.Username, want)
	}
	if !strings.Contains(strings.Join(review.Status.Audiences, ","), "sts.amazonaws.com") {
		t.Errorf("audiences = %v", review.Status.Audiences)
	}

	missing := auth.Identity{ServiceAccount: &types.NamespacedName{Namespace: ns, Name: "nobody"}}
	_, err = s.ServiceAccountToken(ctx, missing, "sts.amazonaws.com")
	if err == nil || !strings.Contains(err.Error(), "failed to get service account '"+ns+"/nobody'") {
		t.Errorf("missing ServiceAccount: err = %v", err)
	}
}
