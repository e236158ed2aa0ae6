package ocirepository

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/auth"
	"github.com/weir-gitops/weir/internal/auth/aws"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/awsfake"
	"github.com/weir-gitops/weir/internal/devenv/testenv/ociregistry"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
	"github.com/weir-gitops/weir/internal/runtime/errs"
	"github.com/weir-gitops/weir/internal/source"
)

// ecrHost is the registry the tests' OCIRepositories name; their
// spec.proxySecretRef sends its requests to the local registry.
const ecrHost = "123456789012.dkr.ecr.eu-west-1.amazonaws.com"

// awsSetup is the fake AWS, a registry that only takes the fake's ECR
// login, and a proxy Secret mapping ecrHost to it.
func awsSetup(t *testing.T, env *testenv.Env, ns string) (*awsfake.Fake, *ociregistry.Registry, string, func() []string) {
	t.Helper()
	fake, reg := awsfake.NewECR(t, env.Client, ns)
	digest := reg.PushArtifact(t, "org/app", "v1", ociregistry.Artifact{Files: map[string]string{"a.yaml": "a: 1\n"}})
	proxy, hosts := awsfake.RegistryProxy(t, reg.URL())
	create(t, env, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "to-ecr", Namespace: ns},
		Data: map[string][]byte{"address": []byte(proxy)}})
	return fake, reg, digest, hosts
}

func ecrRepo(ns, name, sa string) *sourcev1.OCIRepository {
	obj := newRepo(ns, name, "oci://"+ecrHost+"/org/app", &sourcev1.OCIRepositoryRef{Tag: "v1"})
	obj.Spec.Provider, obj.Spec.Insecure, obj.Spec.ServiceAccountName = aws.ProviderName, true, sa
	obj.Spec.ProxySecretRef = &meta.LocalObjectReference{Name: "to-ecr"}
	return obj
}

func roleSA(ns, name string) *corev1.ServiceAccount {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if name != "plain" {
		sa.Annotations = map[string]string{aws.RoleARNAnnotation: "arn:aws:iam::123456789012:role/" + name}
	}
	return sa
}

// TestProviderAWSObjectLevel pulls from "ECR" as two ServiceAccounts: each
// gets its own role session from a TokenRequest the API server vouches
// for, the registry sees the ECR login, and a second reconcile exchanges
// nothing (the token cache). A ServiceAccount without a role, and a host
// that is not ECR's, fail with Flux's messages.
func TestProviderAWSObjectLevel(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	fake, _, digest, hosts := awsSetup(t, env, ns)
	create(t, env, roleSA(ns, "team-a"), roleSA(ns, "team-b"), roleSA(ns, "plain"))
	a, b := ecrRepo(ns, "a", "team-a"), ecrRepo(ns, "b", "team-b")
	create(t, env, a, b)
	waitReady(t, env, a, "v1@"+digest)
	waitReady(t, env, b, "v1@"+digest)

	sts := fake.Requests("sts")
	var got []string
	for _, r := range sts {
		got = append(got, r.Form.Get("RoleArn")+" as "+r.Subject+" ("+r.Form.Get("RoleSessionName")+")")
	}
	slices.Sort(got)
	want := []string{
		"arn:aws:iam::123456789012:role/team-a as system:serviceaccount:" + ns + ":team-a (team-a." + ns + ".eu-west-1.fluxcd.io)",
		"arn:aws:iam::123456789012:role/team-b as system:serviceaccount:" + ns + ":team-b (team-b." + ns + ".eu-west-1.fluxcd.io)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("STS exchanges:\n got %q\nwant %q", got, want)
	}
	if !slices.Contains(hosts(), ecrHost) {
		t.Errorf("the registry was not reached as %s: %v", ecrHost, hosts())
	}

	env.RequestReconcile(t, a)
	env.WaitHandled(t, a)
	if n, m := len(fake.Requests("sts")), len(fake.Requests("ecr")); n != 2 || m != 2 {
		t.Errorf("after a second reconcile: %d STS and %d ECR calls, want 2 and 2 (cached)", n, m)
	}

	plain := ecrRepo(ns, "plain", "plain")
	notECR := ecrRepo(ns, "not-ecr", "team-a")
	notECR.Spec.URL = "oci://ghcr.io/org/app"
	create(t, env, plain, notECR)
	for obj, want := range map[*sourcev1.OCIRepository]string{
		plain: "failed to get credential from aws: failed to get access token for artifact registry: failed to get provider identity from service account '" +
			ns + "/plain' annotations: invalid eks.amazonaws.com/role-arn annotation: ''. must match ",
		notECR: "failed to get credential from aws: invalid AWS registry: 'ghcr.io'. must match ",
	} {
		ready := env.WaitForFailure(t, obj, sourcev1.AuthenticationFailedReason)
		if !strings.HasPrefix(ready.Message, want) {
			t.Errorf("%s: message %q, want prefix %q", obj.Name, ready.Message, want)
		}
	}
}

// TestProviderAWSGateOff is Flux's refusal of spec.serviceAccountName for
// a provider without the ObjectLevelWorkloadIdentity gate: the object
// stalls with FeatureGateDisabled, and nothing reaches AWS.
func TestProviderAWSGateOff(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	fake, _, _, _ := awsSetup(t, env, ns)
	create(t, env, roleSA(ns, "team-a"))
	r := &Reconciler{Deps: source.Deps{Client: env.Client, APIReader: env.Client, Auth: &auth.Settings{Client: env.Client}}}
	_, err := r.remoteOptions(context.Background(), ecrRepo(ns, "a", "team-a"))
	var stall *errs.Stalling
	want := "to use spec.serviceAccountName for provider authentication please enable the ObjectLevelWorkloadIdentity feature gate in the controller"
	if !errors.As(err, &stall) || stall.Reason != meta.FeatureGateDisabledReason || err.Error() != want {
		t.Errorf("err = %#v, want a FeatureGateDisabled stall %q", err, want)
	}
	if n := len(fake.Requests("")); n != 0 {
		t.Errorf("%d calls reached AWS", n)
	}
}

// TestProviderAWSPublic pulls from ECR Public (oci://public.ecr.aws/…) as
// the controller's IRSA identity: the login is ECR Public's
// GetAuthorizationToken, signed for ecr-public in us-east-1 whatever the
// controller's region, and no private ECR call is made. (The package's
// controller keeps that controller login cached: no other test here pulls
// as the controller.)
func TestProviderAWSPublic(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	fake, _, digest, hosts := awsSetup(t, env, ns)
	awsfake.SetIRSAAs(t, env.Client, env.Namespace(t), "weir-controller")
	t.Setenv("AWS_REGION", "eu-west-1")
	obj := ecrRepo(ns, "public", "")
	obj.Spec.URL = "oci://" + aws.PublicRegistry + "/org/app"
	create(t, env, obj)
	waitReady(t, env, obj, "v1@"+digest)

	pub := fake.Requests("ecr-public")
	if len(pub) != 1 || pub[0].Region != "us-east-1" || pub[0].Service != "ecr-public" || pub[0].Action != "GetAuthorizationToken" {
		t.Errorf("ECR Public calls = %+v, want one GetAuthorizationToken signed for ecr-public in us-east-1", pub)
	}
	if sts := fake.Requests("sts"); len(sts) != 1 || sts[0].Form.Get("RoleArn") != "arn:aws:iam::123456789012:role/weir-controller" {
		t.Errorf("STS calls = %+v, want the controller's role once", sts)
	}
	if ecr := fake.Requests("ecr"); len(ecr) != 0 {
		t.Errorf("private ECR calls = %+v, want none", ecr)
	}
	if !slices.Contains(hosts(), aws.PublicRegistry) {
		t.Errorf("the registry was not reached as %s: %v", aws.PublicRegistry, hosts())
	}
}

// TestProviderAWSLockdown is Flux's multi-tenancy lockdown with the gate
// on (--default-service-account=default) while the controller itself has
// an IRSA role: an OCIRepository naming no ServiceAccount pulls as its
// namespace's default ServiceAccount and that account's role, never the
// controller's; in a namespace whose default account has no role, or no
// default account, it is refused with Flux's message, and the controller's
// identity is not tried in its place.
func TestProviderAWSLockdown(t *testing.T) {
	env := testenv.Get(t)
	tenant, bare, empty := env.Namespace(t), env.Namespace(t), env.Namespace(t)
	fake, _, _, _ := awsSetup(t, env, tenant)
	awsfake.SetIRSAAs(t, env.Client, env.Namespace(t), "weir-controller")
	create(t, env, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: tenant, Name: "default",
		Annotations: map[string]string{aws.RoleARNAnnotation: "arn:aws:iam::123456789012:role/tenant"}}})
	create(t, env, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: bare, Name: "default"}})
	settings := &auth.Settings{ObjectLevel: true, DefaultServiceAccount: "default", Client: env.Client, Cache: auth.NewCache(10, time.Hour)}
	r := &Reconciler{Deps: source.Deps{Client: env.Client, APIReader: env.Client, Auth: settings}}

	if _, err := r.remoteOptions(context.Background(), ecrRepo(tenant, "app", "")); err != nil {
		t.Fatalf("tenant's default account: %v", err)
	}
	sts := fake.Requests("sts")
	if len(sts) != 1 || sts[0].Form.Get("RoleArn") != "arn:aws:iam::123456789012:role/tenant" ||
		sts[0].Subject != "system:serviceaccount:"+tenant+":default" {
		t.Fatalf("STS exchanges = %+v, want one as %s/default for its role", sts, tenant)
	}

	for ns, want := range map[string]string{
		bare: "failed to get credential from aws: failed to get access token for artifact registry: failed to get provider identity from service account '" +
			bare + "/default' annotations: invalid eks.amazonaws.com/role-arn annotation: ''. must match ",
		empty: "failed to get credential from aws: failed to get access token for artifact registry: ",
	} {
		obj := ecrRepo(ns, "app", "")
		obj.Spec.ProxySecretRef = nil
		_, err := r.remoteOptions(context.Background(), obj)
		if err == nil || !strings.HasPrefix(err.Error(), want) || errs.Reason(err, "") != sourcev1.AuthenticationFailedReason {
			t.Errorf("%s: err = %v, want AuthenticationFailed %q…", ns, err, want)
		}
		if ns == empty && (err == nil || !strings.Contains(err.Error(), `serviceaccounts "default" not found`)) {
			t.Errorf("no default account: err = %v, want it named as not found", err)
		}
	}
	if n := len(fake.Requests("sts")); n != 1 {
		t.Errorf("%d STS exchanges, want only the tenant's: the controller's role was tried for a locked-down object", n)
	}
}

// TestProviderAWSCosign: the signature of an "ECR" artifact is fetched
// with the same ECR login as the artifact (the registry takes no other),
// and an artifact re-pushed under a signed tag fails verification.
func TestProviderAWSCosign(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	fake, reg, digest, _ := awsSetup(t, env, ns)
	key := ociregistry.NewCosignKey(t)
	key.Sign(t, reg, "org/app", digest)
	signed := reg.PushArtifact(t, "org/app", "v2", ociregistry.Artifact{Files: map[string]string{"a.yaml": "a: 2\n"}})
	key.Sign(t, reg, "org/app", signed)
	reg.PushArtifact(t, "org/app", "v2", ociregistry.Artifact{Files: map[string]string{"a.yaml": "a: evil\n"}})
	create(t, env, roleSA(ns, "team-a"), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "cosign-keys", Namespace: ns},
		Data:       map[string][]byte{"cosign.pub": key.PublicPEM(t)},
	})
	verified := func(name, tag string) *sourcev1.OCIRepository {
		obj := ecrRepo(ns, name, "team-a")
		obj.Spec.Reference.Tag = tag
		obj.Spec.Verify = &sourcev1.OCIRepositoryVerification{OCIVerification: sourcev1.OCIVerification{
			Provider: sourcev1.VerificationProviderCosign, SecretRef: &meta.LocalObjectReference{Name: "cosign-keys"},
		}}
		create(t, env, obj)
		return obj
	}
	obj := waitReady(t, env, verified("signed", "v1"), "v1@"+digest)
	if c := conditions.Get(obj, sourcev1.SourceVerifiedCondition); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("SourceVerified = %+v", c)
	}
	tampered := verified("tampered", "v2")
	ready := env.WaitForFailure(t, tampered, sourcev1.VerificationError)
	if c := conditions.Get(tampered, sourcev1.SourceVerifiedCondition); c == nil || c.Status != metav1.ConditionFalse ||
		!strings.HasPrefix(ready.Message, "failed to verify the signature using provider 'cosign'") || tampered.Status.Artifact != nil {
		t.Errorf("Ready %q, SourceVerified %+v, artifact %v", ready.Message, c, tampered.Status.Artifact)
	}
	if n := len(fake.Requests("ecr")); n != 1 {
		t.Errorf("%d ECR calls, want 1: the signature pulls reuse the cached login", n)
	}
}

// TestProviderAWSThroughProxy: with spec.proxySecretRef, the token
// exchange goes through the object's proxy as the pull does (Flux's
// behaviour): STS's AssumeRoleWithWebIdentity and ECR's
// GetAuthorizationToken reach the fake only through it. A proxy that
// refuses the Secret's password fails with a message that names the call
// and shows no password.
func TestProviderAWSThroughProxy(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	fake, reg, digest, _ := awsSetup(t, env, ns)
	proxy := awsfake.NewProxy(t, awsfake.ProxyOptions{Registry: reg.URL(), Username: "weir", Password: "proxy-pass-" + ns})
	create(t, env, roleSA(ns, "team-a"), roleSA(ns, "team-b"),
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "proxy", Namespace: ns},
			Data: map[string][]byte{"address": []byte(proxy.URL), "username": []byte("weir"), "password": []byte("proxy-pass-" + ns)}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "proxy-wrong", Namespace: ns},
			Data: map[string][]byte{"address": []byte(proxy.URL), "username": []byte("weir"), "password": []byte("wrong-pass-" + ns)}})
	obj := ecrRepo(ns, "proxied", "team-a")
	obj.Spec.ProxySecretRef.Name = "proxy"
	create(t, env, obj)
	waitReady(t, env, obj, "v1@"+digest)

	fakeHost := strings.TrimPrefix(fake.URL(), "http://")
	want := []string{
		fakeHost, // STS: AssumeRoleWithWebIdentity
		fakeHost + " AmazonEC2ContainerRegistry_V20150921.GetAuthorizationToken",
		"CONNECT " + ecrHost + ":443", // refused: the insecure registry falls back to HTTP
		ecrHost,
	}
	seen := slices.Compact(proxy.Seen())
	if len(seen) < len(want) || !slices.Equal(seen[:len(want)], want) {
		t.Errorf("through the proxy: %q, want %q first", seen, want)
	}
	if n, m := len(fake.Requests("sts")), len(fake.Requests("ecr")); n != 1 || m != 1 {
		t.Errorf("%d STS and %d ECR calls, want 1 and 1", n, m)
	}

	wrong := ecrRepo(ns, "wrong-password", "team-b")
	wrong.Spec.ProxySecretRef.Name = "proxy-wrong"
	create(t, env, wrong)
	ready := env.WaitForFailure(t, wrong, sourcev1.AuthenticationFailedReason)
	prefix := "failed to get credential from aws: failed to get access token for artifact registry: " +
		"failed to create provider access token for service account '" + ns + "/team-b': operation error STS: AssumeRoleWithWebIdentity"
	if !strings.HasPrefix(ready.Message, prefix) || !strings.Contains(ready.Message, "407") {
		t.Errorf("wrong proxy password: %q, want prefix %q and the proxy's 407", ready.Message, prefix)
	}
	if strings.Contains(ready.Message, "wrong-pass-") || strings.Contains(ready.Message, "proxy-pass-") {
		t.Errorf("the message shows a proxy password: %s", ready.Message)
	}
	t.Log(ready.Message)
}
