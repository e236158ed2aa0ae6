package bucket

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/auth"
	awsauth "github.com/weir-gitops/weir/internal/auth/aws"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/awsfake"
	"github.com/weir-gitops/weir/internal/devenv/testenv/s3server"
	"github.com/weir-gitops/weir/internal/runtime/errs"
	"github.com/weir-gitops/weir/internal/source"
)

// awsFixture is the fake AWS STS and an S3 server that accepts only the
// credentials the fake issued (with their session tokens) and the
// fixture's static keys, holding one bucket.
type awsFixture struct {
	*fixture
	fake     *awsfake.Fake
	revision string
}

func newAWSFixture(t *testing.T) *awsFixture {
	t.Helper()
	fake := awsfake.New(t)
	f := &awsFixture{fake: fake}
	f.fixture = newFixture(t, s3server.Options{Keys: fake.Issued})
	f.srv.CreateBucket(t, "manifests")
	f.revision = revisionOf(map[string]string{
		"app/deploy.yaml": f.srv.PutObject(t, "manifests", "app/deploy.yaml", "kind: Deployment\n"),
	})
	f.srv.PutObject(t, "manifests", "other/x.yaml", "x: 1\n")
	return f
}

// awsBucket is an aws Bucket on the fixture's server under prefix app/,
// with no Secret.
func (f *awsFixture) awsBucket(name, sa string) *sourcev1.Bucket {
	obj := f.newBucket(name, "manifests")
	obj.Spec.Provider, obj.Spec.Region, obj.Spec.Prefix = sourcev1.BucketProviderAmazon, "eu-west-1", "app/"
	obj.Spec.SecretRef, obj.Spec.ServiceAccountName = nil, sa
	return obj
}

// issuedKeys are the access keys S3 accepted that the fake's STS issued.
func (f *awsFixture) issuedKeys() []string {
	var keys []string
	for _, k := range f.srv.AccessKeys() {
		if _, _, ok := f.fake.Issued(k); ok {
			keys = append(keys, k)
		}
	}
	return keys
}

// TestProviderAWSObjectLevel reads an S3 bucket as two ServiceAccounts:
// each role is assumed with a TokenRequest the API server vouches for, S3
// sees the STS-issued keys with their session tokens, and a second
// reconcile exchanges nothing (the token cache).
func TestProviderAWSObjectLevel(t *testing.T) {
	f := newAWSFixture(t)
	f.fake.ReviewWebIdentity = awsfake.TokenReview(f.env.Client, awsauth.Audience)
	f.fake.Setenv(t)
	for _, name := range []string{"team-a", "team-b", "plain"} {
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name}}
		if name != "plain" {
			sa.Annotations = map[string]string{awsauth.RoleARNAnnotation: "arn:aws:iam::123456789012:role/" + name}
		}
		f.create(t, sa)
	}
	a, b := f.awsBucket("a", "team-a"), f.awsBucket("b", "team-b")
	f.create(t, a)
	f.create(t, b)
	waitReady(t, f.env, a, f.revision)
	waitReady(t, f.env, b, f.revision)

	var got []string
	for _, r := range f.fake.Requests("sts") {
		got = append(got, r.Form.Get("RoleArn")+" as "+r.Subject+" ("+r.Form.Get("RoleSessionName")+")")
	}
	slices.Sort(got)
	want := []string{
		"arn:aws:iam::123456789012:role/team-a as system:serviceaccount:" + f.ns + ":team-a (team-a." + f.ns + ".eu-west-1.fluxcd.io)",
		"arn:aws:iam::123456789012:role/team-b as system:serviceaccount:" + f.ns + ":team-b (team-b." + f.ns + ".eu-west-1.fluxcd.io)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("STS exchanges:\n got %q\nwant %q", got, want)
	}
	if keys := f.issuedKeys(); len(keys) != 2 {
		t.Errorf("S3 accepted STS-issued keys %q, want the two issued", keys)
	}

	f.env.RequestReconcile(t, a)
	f.env.WaitHandled(t, a)
	if n := len(f.fake.Requests("sts")); n != 2 {
		t.Errorf("after a second reconcile: %d STS calls, want 2 (cached)", n)
	}

	plain := f.awsBucket("plain", "plain")
	f.create(t, plain)
	ready := f.env.WaitForFailure(t, plain, sourcev1.AuthenticationFailedReason)
	wantMsg := "failed to get credentials from 'aws': failed to get provider identity from service account '" + f.ns +
		"/plain' annotations: invalid eks.amazonaws.com/role-arn annotation: ''. must match "
	if !strings.HasPrefix(ready.Message, wantMsg) {
		t.Errorf("message %q, want prefix %q", ready.Message, wantMsg)
	}
}

// TestProviderAWSControllerIdentityAndSTSEndpoint is the controller's own
// IRSA identity, its web identity exchange sent to spec.sts.endpoint (no
// AWS_ENDPOINT_URL_STS is set), and the static keys of spec.secretRef,
// which need no exchange at all.
func TestProviderAWSControllerIdentityAndSTSEndpoint(t *testing.T) {
	f := newAWSFixture(t)
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	awsfake.SetIRSA(t, "arn:aws:iam::123456789012:role/source-controller", "irsa-projected-token")
	obj := f.awsBucket("irsa", "")
	obj.Spec.STS = &sourcev1.BucketSTSSpec{Provider: sourcev1.STSProviderAmazon, Endpoint: f.fake.URL()}
	f.create(t, obj)
	waitReady(t, f.env, obj, f.revision)
	sts := f.fake.Requests("sts")
	if len(sts) != 1 || sts[0].Form.Get("RoleArn") != "arn:aws:iam::123456789012:role/source-controller" ||
		sts[0].Form.Get("WebIdentityToken") != "irsa-projected-token" {
		t.Errorf("STS requests %+v, want one AssumeRoleWithWebIdentity with the IRSA role and token", sts)
	}
	if keys := f.issuedKeys(); len(keys) != 1 {
		t.Errorf("S3 accepted STS-issued keys %q, want one", keys)
	}

	static := f.awsBucket("static", "")
	static.Spec.SecretRef = &meta.LocalObjectReference{Name: "creds"}
	f.create(t, static)
	waitReady(t, f.env, static, f.revision)
	if n := len(f.fake.Requests("sts")); n != 1 {
		t.Errorf("%d STS calls, want 1: spec.secretRef needs no exchange", n)
	}
	if !slices.Contains(f.srv.AccessKeys(), accessKey) {
		t.Errorf("S3 never saw the Secret's access key: %q", f.srv.AccessKeys())
	}
}

// TestProviderAWSGateOff is Flux's refusal of spec.serviceAccountName
// without the ObjectLevelWorkloadIdentity gate: the object stalls with
// FeatureGateDisabled and nothing reaches STS.
func TestProviderAWSGateOff(t *testing.T) {
	f := newAWSFixture(t)
	f.fake.Setenv(t)
	r := &Reconciler{Deps: source.Deps{Client: f.env.Client, APIReader: f.env.Client, Auth: &auth.Settings{Client: f.env.Client}}}
	_, err := r.client(context.Background(), f.awsBucket("gated", "team-a"))
	var stall *errs.Stalling
	want := "to use spec.serviceAccountName for provider authentication please enable the ObjectLevelWorkloadIdentity feature gate in the controller"
	if !errors.As(err, &stall) || stall.Reason != meta.FeatureGateDisabledReason || err.Error() != want {
		t.Errorf("err = %#v, want a FeatureGateDisabled stall %q", err, want)
	}
	if n := len(f.fake.Requests("")); n != 0 {
		t.Errorf("%d calls reached AWS", n)
	}
}

// TestSTSLDAP is a generic Bucket with spec.sts.provider ldap: the
// controller trades the Secret's LDAP user for temporary keys at MinIO's
// STS and lists with them; a Secret without the password is Flux's
// AuthenticationFailed, and a wrong password is the STS's answer, with
// no password in the message.
func TestSTSLDAP(t *testing.T) {
	f := newAWSFixture(t)
	f.fake.LDAPUsers = map[string]string{"alice": "wonder-land"}
	f.createSecret(t, "ldap", map[string][]byte{"username": []byte("alice"), "password": []byte("wonder-land")})
	f.createSecret(t, "ldap-wrong", map[string][]byte{"username": []byte("alice"), "password": []byte("guess-who")})
	f.createSecret(t, "ldap-partial", map[string][]byte{"username": []byte("alice")})
	bucket := func(name, secret string) *sourcev1.Bucket {
		obj := f.newBucket(name, "manifests")
		obj.Spec.SecretRef, obj.Spec.Prefix = nil, "app/"
		obj.Spec.STS = &sourcev1.BucketSTSSpec{Provider: sourcev1.STSProviderLDAP, Endpoint: f.fake.URL(),
			SecretRef: &meta.LocalObjectReference{Name: secret}}
		return obj
	}
	obj := bucket("ldap", "ldap")
	f.create(t, obj)
	waitReady(t, f.env, obj, f.revision)
	if sts := f.fake.Requests("sts"); len(sts) == 0 || sts[0].Action != "AssumeRoleWithLDAPIdentity" || sts[0].Form.Get("LDAPUsername") != "alice" {
		t.Errorf("STS requests %+v, want AssumeRoleWithLDAPIdentity for alice", sts)
	}
	if keys := f.issuedKeys(); len(keys) == 0 {
		t.Error("S3 never saw the STS-issued keys")
	}

	for name, want := range map[string]string{
		"ldap-partial": "invalid 'ldap-partial' secret data for 'ldap' STS provider: required fields username, password",
		"ldap-wrong":   "LDAP auth failed",
	} {
		obj := bucket(name, name)
		f.create(t, obj)
		reason := sourcev1.AuthenticationFailedReason
		if name == "ldap-wrong" {
			reason = sourcev1.BucketOperationFailedReason
		}
		ready := f.env.WaitForFailure(t, obj, reason)
		if !strings.Contains(ready.Message, want) || strings.Contains(ready.Message, "guess-who") {
			t.Errorf("%s: message %q, want it to contain %q and no password", name, ready.Message, want)
		}
	}
}

// TestProviderAWSThroughProxy: with spec.proxySecretRef, the web identity
// exchange at spec.sts.endpoint goes through the object's proxy as the S3
// reads do (Flux's behaviour).
func TestProviderAWSThroughProxy(t *testing.T) {
	f := newAWSFixture(t)
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	awsfake.SetIRSA(t, "arn:aws:iam::123456789012:role/source-controller", "irsa-projected-token")
	proxy := awsfake.NewProxy(t, awsfake.ProxyOptions{Username: "weir", Password: "proxy-pass"})
	f.createSecret(t, "proxy", map[string][]byte{"address": []byte(proxy.URL), "username": []byte("weir"), "password": []byte("proxy-pass")})
	obj := f.awsBucket("proxied", "")
	obj.Spec.STS = &sourcev1.BucketSTSSpec{Provider: sourcev1.STSProviderAmazon, Endpoint: f.fake.URL()}
	obj.Spec.ProxySecretRef = &meta.LocalObjectReference{Name: "proxy"}
	f.create(t, obj)
	waitReady(t, f.env, obj, f.revision)
	seen := proxy.Seen()
	if len(seen) < 2 || seen[0] != strings.TrimPrefix(f.fake.URL(), "http://") || !slices.Contains(seen[1:], strings.TrimPrefix(f.srv.URL(), "http://")) {
		t.Errorf("through the proxy: %q, want STS (%s) first, then S3 (%s)", seen, f.fake.URL(), f.srv.URL())
	}
	if n := len(f.fake.Requests("sts")); n != 1 {
		t.Errorf("%d STS calls, want 1", n)
	}
}
