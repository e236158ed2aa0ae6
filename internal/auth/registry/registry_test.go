package registry

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"

	"github.com/weir-gitops/weir/internal/auth"
)

func TestHost(t *testing.T) {
	for in, want := range map[string]string{
		"oci://123456789012.dkr.ecr.eu-west-1.amazonaws.com/org/app": "123456789012.dkr.ecr.eu-west-1.amazonaws.com",
		"public.ecr.aws/org/app":                                     "public.ecr.aws",
		"public.ecr.aws/":                                            "public.ecr.aws",
		"127.0.0.1:5000/app:v1":                                      "127.0.0.1:5000",
		"org/app":                                                    "index.docker.io",
		"oci://ghcr.io/org/app/x":                                    "ghcr.io",
	} {
		if got, err := Host(in); err != nil || got != want {
			t.Errorf("Host(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestLoginRefusals(t *testing.T) {
	_, err := Login(context.Background(), "quay", "quay.io/p/app", auth.Identity{}, nil)
	if !errors.Is(err, ErrUnsupportedProvider) {
		t.Errorf("quay: err = %v, want ErrUnsupportedProvider", err)
	}
	_, err = Login(context.Background(), "aws", "ghcr.io/org/app", auth.Identity{}, nil)
	if err == nil || !strings.HasPrefix(err.Error(), "invalid AWS registry: 'ghcr.io'") {
		t.Errorf("aws on ghcr.io: err = %v", err)
	}
}

func TestKeychainScopesAndHides(t *testing.T) {
	l := &login{host: "r.example", auth: authn.AuthConfig{Username: "AWS", Password: "hunter2"}}
	k := Keychain("r.example", l)
	for repo, want := range map[string]authn.Authenticator{"r.example/app": l, "other.example/app": authn.Anonymous} {
		r, _ := name.NewRepository(repo)
		if got, _ := k.Resolve(r); got != want {
			t.Errorf("%s resolved to %v", repo, got)
		}
	}
	for _, s := range []string{fmt.Sprint(k), fmt.Sprintf("%#v", k), fmt.Sprint(l), fmt.Sprintf("%#v", l)} {
		if strings.Contains(s, "hunter2") {
			t.Errorf("printed the password: %s", s)
		}
	}
}
