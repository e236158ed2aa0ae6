package aws_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/weir-gitops/weir/internal/auth"
	"github.com/weir-gitops/weir/internal/auth/aws"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/awsfake"
)

func TestMain(m *testing.M) {
	ctrllog.SetLogger(logr.Discard())
	testenv.Main(m, testenv.APIServerOnly)
}

const ecrHost = "123456789012.dkr.ecr.eu-west-1.amazonaws.com"

func TestParseRegistry(t *testing.T) {
	tests := []struct {
		host, region string
		public       bool
		wantErr      bool
	}{
		{host: ecrHost, region: "eu-west-1"},
		{host: "123456789012.dkr.ecr-fips.us-gov-west-1.amazonaws.com", region: "us-gov-west-1"},
		{host: "123456789012.dkr.ecr.cn-north-1.amazonaws.com.cn", region: "cn-north-1"},
		{host: "public.ecr.aws", region: "us-east-1", public: true},
		{host: "ghcr.io", wantErr: true},
		{host: "127.0.0.1:5000", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			got, err := aws.ParseRegistry(tt.host)
			if tt.wantErr {
				want := "invalid AWS registry: '" + tt.host + "'. must match "
				if err == nil || !strings.HasPrefix(err.Error(), want) {
					t.Fatalf("err = %v, want prefix %q", err, want)
				}
				return
			}
			if err != nil || got.Region != tt.region || got.Public != tt.public {
				t.Fatalf("ParseRegistry = %+v, %v", got, err)
			}
		})
	}
}

// TestObjectLevelLogins runs the whole object-level path against the real
// API server and the fake: each ServiceAccount's TokenRequest (checked by
// TokenReview) becomes its own role session, the ECR call is signed with
// that session's key for ecr in the registry's region, and the cache makes
// a second login exchange nothing.
func TestObjectLevelLogins(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	ctx := context.Background()
	fake := awsfake.New(t)
	fake.ReviewWebIdentity = awsfake.TokenReview(env.Client, aws.Audience)
	fake.Setenv(t)
	env.Create(t, roleSA(ns, "team-a"), roleSA(ns, "team-b"), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "plain"}})
	s := &auth.Settings{ObjectLevel: true, Client: env.Client, Cache: auth.NewCache(10, time.Hour)}

	for _, name := range []string{"team-a", "team-b", "team-a"} {
		id, _ := s.IdentityFor(ns, name)
		tok, err := aws.RegistryLogin(ctx, s, id, ecrHost)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if tok.Username != "AWS" || tok.Value != fake.RegistryPassword {
			t.Errorf("%s: login %s/%q, want AWS and the fake's password", name, tok.Username, tok.Value)
		}
	}
	sts := fake.Requests("sts")
	if len(sts) != 2 {
		t.Fatalf("STS calls = %d, want 2 (the third login is cached): %+v", len(sts), sts)
	}
	for i, name := range []string{"team-a", "team-b"} {
		f := sts[i].Form
		if got, want := f.Get("RoleArn"), "arn:aws:iam::123456789012:role/"+name; got != want {
			t.Errorf("RoleArn = %s, want %s", got, want)
		}
		if got, want := f.Get("RoleSessionName"), name+"."+ns+".eu-west-1.fluxcd.io"; got != want {
			t.Errorf("RoleSessionName = %s, want %s", got, want)
		}
		if got, want := sts[i].Subject, "system:serviceaccount:"+ns+":"+name; got != want {
			t.Errorf("web identity is %s's, want %s's", got, want)
		}
		if sts[i].Scope != "" {
			t.Errorf("AssumeRoleWithWebIdentity was signed: %s", sts[i].Scope)
		}
	}
	ecr := fake.Requests("ecr")
	if len(ecr) != 2 {
		t.Fatalf("ECR calls = %d, want 2", len(ecr))
	}
	if ecr[0].Region != "eu-west-1" || ecr[0].Service != "ecr" || ecr[0].AccessKeyID == ecr[1].AccessKeyID {
		t.Errorf("ECR calls signed as %s and %s", ecr[0].Scope, ecr[1].Scope)
	}

	id, _ := s.IdentityFor(ns, "plain")
	_, err := aws.RegistryLogin(ctx, s, id, ecrHost)
	want := "failed to get access token for artifact registry: failed to get provider identity from service account '" + ns +
		"/plain' annotations: invalid eks.amazonaws.com/role-arn annotation: ''. must match "
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("no annotation: err = %v, want prefix %q", err, want)
	}
}

// TestPublicAndFailures covers ECR Public (us-east-1, ecr-public's
// signature) and the errors: STS refusing a token, ECR refusing a key;
// none shows a secret.
func TestPublicAndFailures(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	ctx := context.Background()
	fake := awsfake.New(t)
	fake.Setenv(t)
	env.Create(t, roleSA(ns, "pub"))
	s := &auth.Settings{ObjectLevel: true, Client: env.Client}
	id, _ := s.IdentityFor(ns, "pub")

	tok, err := aws.RegistryLogin(ctx, s, id, aws.PublicRegistry)
	if err != nil || tok.Value != fake.RegistryPassword {
		t.Fatalf("public login = %v, %v", tok, err)
	}
	pub := fake.Requests("ecr-public")
	if len(pub) != 1 || pub[0].Region != "us-east-1" || pub[0].Service != "ecr-public" {
		t.Errorf("ECR Public calls = %+v", pub)
	}

	fake.ReviewWebIdentity = func(string) (string, error) { return "", os.ErrPermission }
	_, err = aws.RegistryLogin(ctx, s, id, ecrHost)
	want := "failed to get access token for artifact registry: failed to create provider access token for service account '" +
		ns + "/pub': operation error STS: AssumeRoleWithWebIdentity"
	if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "InvalidIdentityToken") {
		t.Errorf("STS refusal: err = %v, want prefix %q", err, want)
	}
	assertNoSecrets(t, err)
}

// TestControllerIRSA is the controller's own identity through IRSA: a
// projected token in a file, the role in AWS_ROLE_ARN; the SDK's chain
// exchanges it with the fake's STS in the registry's region.
func TestControllerIRSA(t *testing.T) {
	fake := awsfake.New(t)
	fake.Setenv(t)
	awsfake.SetIRSA(t, "arn:aws:iam::123456789012:role/weir-controller", "projected-token")
	t.Setenv("AWS_ROLE_SESSION_NAME", "weir-controller")
	s := &auth.Settings{Cache: auth.NewCache(10, time.Hour)}

	for range 2 {
		tok, err := aws.RegistryLogin(context.Background(), s, auth.Identity{}, ecrHost)
		if err != nil || tok.Value != fake.RegistryPassword {
			t.Fatalf("login = %v, %v", tok, err)
		}
	}
	sts := fake.Requests("sts")
	if len(sts) != 1 {
		t.Fatalf("STS calls = %d, want 1", len(sts))
	}
	if f := sts[0].Form; f.Get("WebIdentityToken") != "projected-token" || f.Get("RoleArn") != "arn:aws:iam::123456789012:role/weir-controller" {
		t.Errorf("STS form = %v", f)
	}
	if ecr := fake.Requests("ecr"); len(ecr) != 1 || ecr[0].Region != "eu-west-1" {
		t.Errorf("ECR calls = %+v", ecr)
	}

	_, err := aws.RegistryLogin(context.Background(), s, auth.Identity{}, "ghcr.io")
	if err == nil || !strings.HasPrefix(err.Error(), "invalid AWS registry: 'ghcr.io'") {
		t.Errorf("non-ECR host: err = %v", err)
	}
}

// TestControllerPodIdentity is the controller's own identity through EKS
// Pod Identity: the SDK's chain shows the projected token (audience
// pods.eks.amazonaws.com, which the fake agent TokenReviews with the API
// server) to the agent's endpoint and signs ECR with the keys it answers,
// without STS; a second login is the cache's. A token the agent refuses
// fails the login naming the agent's answer, not the token.
func TestControllerPodIdentity(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	fake := awsfake.New(t)
	fake.Setenv(t)
	token := fake.SetPodIdentityAs(t, env.Client, ns, "weir-controller")
	s := &auth.Settings{Cache: auth.NewCache(10, time.Hour)}

	for range 2 {
		tok, err := aws.RegistryLogin(context.Background(), s, auth.Identity{}, ecrHost)
		if err != nil || tok.Value != fake.RegistryPassword {
			t.Fatalf("login = %v, %v", tok, err)
		}
	}
	agent := fake.Requests("pod-identity")
	if len(agent) != 1 || agent[0].Token != token || agent[0].Subject != "system:serviceaccount:"+ns+":weir-controller" {
		t.Errorf("agent calls = %+v, want one with the projected token of %s/weir-controller", agent, ns)
	}
	if sts := fake.Requests("sts"); len(sts) != 0 {
		t.Errorf("STS calls = %+v, want none", sts)
	}
	ecr := fake.Requests("ecr")
	if len(ecr) != 1 || ecr[0].Region != "eu-west-1" || !strings.HasPrefix(ecr[0].AccessKeyID, "ASIAFAKE") {
		t.Fatalf("ECR calls = %+v, want one signed in eu-west-1 with the agent's keys", ecr)
	}
	if _, session, ok := fake.Issued(ecr[0].AccessKeyID); !ok || session != ecr[0].SessionToken {
		t.Errorf("ECR was signed with %s, not a key the agent handed out", ecr[0].AccessKeyID)
	}

	const forged = "forged-pod-identity-token"
	awsfake.SetPodIdentityToken(t, fake.URL()+awsfake.PodIdentityPath, forged)
	_, err := aws.RegistryLogin(context.Background(), &auth.Settings{}, auth.Identity{}, ecrHost)
	if err == nil || !strings.Contains(err.Error(), "AccessDeniedException") {
		t.Fatalf("refused token: err = %v, want the agent's AccessDeniedException", err)
	}
	if strings.Contains(err.Error(), forged) || strings.Contains(err.Error(), token) {
		t.Errorf("the error shows the token: %v", err)
	}
	assertNoSecrets(t, err)
}

// roleSA is a ServiceAccount whose IAM role is named after it.
func roleSA(ns, name string) *corev1.ServiceAccount {
	return &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
		Annotations: map[string]string{aws.RoleARNAnnotation: "arn:aws:iam::123456789012:role/" + name}}}
}

func assertNoSecrets(t *testing.T, err error) {
	t.Helper()
	for _, s := range []string{"secret-ASIA", "session-", "ecr-password", "eyJ"} {
		if err != nil && strings.Contains(err.Error(), s) {
			t.Errorf("error shows %q: %v", s, err)
		}
	}
}

// TestCacheUntilExpiry: a login is reused while fresh, and exchanged
// again once four fifths of its life (the fake's 2s) have passed.
func TestCacheUntilExpiry(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	fake := awsfake.New(t)
	fake.Lifetime = 2 * time.Second
	fake.Setenv(t)
	env.Create(t, roleSA(ns, "short"))
	s := &auth.Settings{ObjectLevel: true, Client: env.Client, Cache: auth.NewCache(10, time.Hour)}
	id, _ := s.IdentityFor(ns, "short")
	login := func() {
		t.Helper()
		if _, err := aws.RegistryLogin(context.Background(), s, id, ecrHost); err != nil {
			t.Fatal(err)
		}
	}
	login()
	login()
	if n := len(fake.Requests("sts")); n != 1 {
		t.Fatalf("STS calls while fresh = %d, want 1", n)
	}
	time.Sleep(1700 * time.Millisecond)
	login()
	if n, m := len(fake.Requests("sts")), len(fake.Requests("ecr")); n != 2 || m != 2 {
		t.Errorf("after expiry: %d STS and %d ECR calls, want 2 and 2", n, m)
	}
}
