package release

import (
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

func TestFactoriesShareByIdentity(t *testing.T) {
	base := &rest.Config{Host: "https://127.0.0.1:6443", BearerToken: "token-a"}
	impersonated := rest.CopyConfig(base)
	impersonated.Impersonate.UserName = "system:serviceaccount:apps:deployer"
	otherToken := rest.CopyConfig(base)
	otherToken.BearerToken = "token-b"
	otherHost := rest.CopyConfig(base)
	otherHost.Host = "https://127.0.0.1:7443"

	tests := []struct {
		name  string
		a, b  *rest.Config
		later time.Duration
		same  bool
	}{
		{"same identity", base, rest.CopyConfig(base), 0, true},
		{"impersonated user", base, impersonated, 0, false},
		{"other credentials", base, otherToken, 0, false},
		{"other cluster", base, otherHost, 0, false},
		{"same identity after the TTL", base, rest.CopyConfig(base), factoryTTL + time.Second, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := time.Unix(0, 0)
			fs := &Factories{now: func() time.Time { return now }}
			a := fs.get(tt.a)
			now = now.Add(tt.later)
			if got := fs.get(tt.b) == a; got != tt.same {
				t.Errorf("shared = %v, want %v", got, tt.same)
			}
		})
	}
}

func TestIdentityKeyHidesCredentials(t *testing.T) {
	key := identityKey(&rest.Config{Host: "https://127.0.0.1", BearerToken: "s3cr3t-token"})
	if len(key) != 64 {
		t.Errorf("key %q is not a sha256 hex digest", key)
	}
}
