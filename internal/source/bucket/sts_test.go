package bucket

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/awsfake"
	"github.com/weir-gitops/weir/internal/devenv/testenv/s3server"
)

// TestTemporaryCredentials: keys an STS issued sign with their session
// token; without the token, or with another, S3 refuses them.
func TestTemporaryCredentials(t *testing.T) {
	srv := s3server.New(t, s3server.Options{Keys: func(id string) (string, string, bool) {
		return "tmp-secret", "tmp-session", id == "ASIATMP"
	}})
	srv.CreateBucket(t, "bkt")
	srv.PutObject(t, "bkt", "a.yaml", "a")
	for _, tt := range []struct {
		name, session, wantErr string
	}{
		{name: "with its session token", session: "tmp-session"},
		{name: "without session token", wantErr: "The provided token is malformed or otherwise invalid."},
		{name: "another session token", session: "stolen", wantErr: "The provided token is malformed or otherwise invalid."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient(t, Config{Endpoint: srv.Endpoint(), Insecure: true,
				Credentials: &Credentials{AccessKey: "ASIATMP", SecretKey: "tmp-secret", SessionToken: tt.session}})
			l, err := c.List(context.Background(), "bkt", "")
			switch {
			case tt.wantErr == "" && (err != nil || len(l.Objects) != 1):
				t.Fatalf("List = %+v, %v", l, err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("List error %v, want %q", err, tt.wantErr)
			}
		})
	}
}

// TestLDAPIdentity is spec.sts.provider ldap: MinIO's
// AssumeRoleWithLDAPIdentity turns the LDAP user into temporary keys,
// which then sign the S3 requests; a wrong password is the STS's error,
// without the password.
func TestLDAPIdentity(t *testing.T) {
	fake := awsfake.New(t)
	fake.LDAPUsers = map[string]string{"alice": "wonder-land"}
	srv := s3server.New(t, s3server.Options{Keys: fake.Issued})
	srv.CreateBucket(t, "bkt")
	srv.PutObject(t, "bkt", "a.yaml", "a")

	c := newClient(t, Config{Endpoint: srv.Endpoint(), Insecure: true,
		LDAP: &LDAPConfig{Endpoint: fake.URL(), Username: "alice", Password: "wonder-land"}})
	if l, err := c.List(context.Background(), "bkt", ""); err != nil || len(l.Objects) != 1 {
		t.Fatalf("List = %+v, %v", l, err)
	}
	sts := fake.Requests("sts")
	if len(sts) != 1 || sts[0].Action != "AssumeRoleWithLDAPIdentity" || sts[0].Form.Get("LDAPUsername") != "alice" ||
		sts[0].Form.Get("Version") != "2011-06-15" {
		t.Fatalf("STS requests %+v", sts)
	}
	if keys := srv.AccessKeys(); len(keys) != 1 || !strings.HasPrefix(keys[0], "ASIAFAKE") {
		t.Errorf("S3 accepted keys %q, want the one the STS issued", keys)
	}

	bad := newClient(t, Config{Endpoint: srv.Endpoint(), Insecure: true,
		LDAP: &LDAPConfig{Endpoint: fake.URL(), Username: "alice", Password: "guess-who"}})
	_, err := bad.List(context.Background(), "bkt", "")
	if err == nil || !strings.Contains(err.Error(), "LDAP auth failed") || strings.Contains(err.Error(), "guess-who") {
		t.Errorf("wrong password: %v", err)
	}
	if slices.Contains(srv.AccessKeys(), "") {
		t.Error("an anonymous request was accepted")
	}
}
