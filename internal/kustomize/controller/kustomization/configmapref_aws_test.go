package kustomization

import (
	"errors"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/apply/restconfig"
	"github.com/weir-gitops/weir/internal/auth/aws"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/awsfake"
)

// TestKubeConfigConfigMapAWSProvider applies through
// spec.kubeConfig.configMapRef with provider aws: the ConfigMap names an
// EKS cluster ARN and a ServiceAccount annotated with an IAM role. The
// "remote" cluster is the test API server behind a proxy that lets
// through only k8s-aws-v1 tokens the fake STS signed for cluster prod;
// the fake's DescribeCluster gives the proxy's address and CA. The write
// lands, and a second reconcile exchanges nothing again (one
// TokenRequest, one AssumeRoleWithWebIdentity, one DescribeCluster). A
// ServiceAccount the fake STS refuses leaves the Kustomization not Ready
// with the STS call's refusal and no token in the message.
func TestKubeConfigConfigMapAWSProvider(t *testing.T) {
	const arn = "arn:aws:eks:eu-west-1:123456789012:cluster/prod"
	f, sha := newFixture(t, map[string]string{"app/a.yaml": configMapYAML("written-via-eks", "k", "v")})
	fake := awsfake.New(t)
	fake.Setenv(t)
	review := awsfake.TokenReview(f.env.Client, aws.Audience)
	refusedSubject := "system:serviceaccount:" + f.ns + ":untrusted"
	fake.ReviewWebIdentity = func(token string) (string, error) {
		who, err := review(token)
		if err == nil && who == refusedSubject {
			return "", errors.New("the role's trust policy does not allow " + who)
		}
		return who, err
	}
	api := testenv.StartRemoteAPI(t, f.env.Config, func(token string) (string, error) {
		id, err := fake.VerifyClusterToken(token)
		return id.Cluster + "@" + id.Region, err
	})
	fake.AddCluster("prod", awsfake.EKSCluster{Endpoint: api.URL, CA: []byte(api.CAPEM())})
	role := map[string]string{aws.RoleARNAnnotation: "arn:aws:iam::123456789012:role/deployer"}
	access := func(sa string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "access-" + sa, Namespace: f.ns}, Data: map[string]string{
			restconfig.KeyProvider: restconfig.ProviderAWS, restconfig.KeyCluster: arn, restconfig.KeyServiceAccountName: sa,
		}}
	}
	f.env.Create(t,
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "deployer", Namespace: f.ns, Annotations: role}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "untrusted", Namespace: f.ns, Annotations: role}},
		access("deployer"), access("untrusted"))
	via := func(cm string) func(*kustomizev1.KustomizationSpec) {
		return func(s *kustomizev1.KustomizationSpec) {
			s.KubeConfig = &meta.KubeConfigReference{ConfigMapRef: &meta.LocalObjectReference{Name: cm}}
		}
	}

	k := f.kustomization("eks", "./app", via("access-deployer"))
	f.env.Create(t, k)
	f.waitApplied(k, "main@sha1:"+sha)
	if cm := f.configMap("written-via-eks"); cm.Data["k"] != "v" {
		t.Errorf("ConfigMap data %v", cm.Data)
	}
	before, _ := api.Accepted()
	f.env.RequestReconcile(t, k)
	f.env.WaitForReady(t, k, nil)

	accepted, refused := api.Accepted()
	if refused != 0 || len(accepted) <= len(before) || slices.ContainsFunc(accepted, func(who string) bool { return who != "prod@eu-west-1" }) {
		t.Errorf("remote API accepted %q (%d before the second reconcile), refused %d; want only prod@eu-west-1, more after",
			accepted, len(before), refused)
	}
	if n := tokenRequestsOf(f.ns, "deployer"); n != 1 {
		t.Errorf("%d TokenRequests for two reconciles, want 1 (cached)", n)
	}
	if describes := fake.Requests("eks"); len(describes) != 1 || describes[0].Region != "eu-west-1" || describes[0].SessionToken == "" {
		t.Errorf("DescribeCluster calls %+v, want one in eu-west-1 with a session", describes)
	}
	var assumed []string
	for _, req := range fake.Requests("sts") {
		if req.Action == "AssumeRoleWithWebIdentity" {
			assumed = append(assumed, req.Subject+" as "+req.Form.Get("RoleArn"))
		}
	}
	if want := []string{"system:serviceaccount:" + f.ns + ":deployer as " + role[aws.RoleARNAnnotation]}; !slices.Equal(assumed, want) {
		t.Errorf("AssumeRoleWithWebIdentity calls %q, want %q", assumed, want)
	}

	untrusted := f.kustomization("untrusted", "./app", via("access-untrusted"))
	f.env.Create(t, untrusted)
	ready := f.waitFailed(untrusted, "", meta.ReconciliationFailedReason)
	for _, want := range []string{"AssumeRoleWithWebIdentity", "InvalidIdentityToken", "'" + f.ns + "/untrusted'"} {
		if !strings.Contains(ready.Message, want) {
			t.Errorf("Ready %q does not say %q", ready.Message, want)
		}
	}
	if strings.Contains(ready.Message, "eyJ") || strings.Contains(ready.Message, "k8s-aws-v1.") {
		t.Errorf("Ready %q carries a token", ready.Message)
	}
}
