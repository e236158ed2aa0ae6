package kustomization

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/apply/restconfig"
	"github.com/weir-gitops/weir/internal/auth"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
	"github.com/weir-gitops/weir/internal/runtime/errs"
)

// tokenRequests counts the TokenRequests the controller made, by
// ServiceAccount ("namespace/name").
var tokenRequests sync.Map

func countTokenRequests(c client.Client) client.Client { return tokenCounter{Client: c} }

// tokenCounter counts the TokenRequests made through it.
type tokenCounter struct{ client.Client }

func (c tokenCounter) SubResource(sub string) client.SubResourceClient {
	return tokenSub{SubResourceClient: c.Client.SubResource(sub), sub: sub}
}

type tokenSub struct {
	client.SubResourceClient
	sub string
}

func (s tokenSub) Create(ctx context.Context, obj, subObj client.Object, opts ...client.SubResourceCreateOption) error {
	if s.sub == "token" {
		n, _ := tokenRequests.LoadOrStore(obj.GetNamespace()+"/"+obj.GetName(), new(atomic.Int32))
		n.(*atomic.Int32).Add(1)
	}
	return s.SubResourceClient.Create(ctx, obj, subObj, opts...)
}

func tokenRequestsOf(ns, name string) int {
	n, ok := tokenRequests.Load(ns + "/" + name)
	if !ok {
		return 0
	}
	return int(n.(*atomic.Int32).Load())
}

// apiAudience is what the test API server accepts tokens for: with no
// --api-audiences, its --service-account-issuer.
const apiAudience = "https://kubernetes.default.svc.cluster.local"

// TestKubeConfigConfigMapGenericProvider applies through
// spec.kubeConfig.configMapRef with provider generic: the "remote" cluster
// is the test API server, reached at its address with its CA and a token
// of a ServiceAccount that may write ConfigMaps in the fixture's namespace
// only. The write lands there; the same Kustomization aimed at another
// namespace is refused for that ServiceAccount by name, so the token, not
// the controller's credentials, did the writing. Without the
// ObjectLevelWorkloadIdentity gate the named account is refused.
func TestKubeConfigConfigMapGenericProvider(t *testing.T) {
	f, sha := newFixture(t, map[string]string{"app/a.yaml": configMapYAML("written-remotely", "k", "v")})
	ctx := context.Background()
	other := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: f.ns + "-other"}}
	f.env.Create(t, other,
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "remote-writer", Namespace: f.ns}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "configmaps", Namespace: f.ns}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
		}},
		&rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "remote-writer", Namespace: f.ns},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "configmaps"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "remote-writer", Namespace: f.ns}},
		},
		f.access("generic", map[string]string{restconfig.KeyServiceAccountName: "remote-writer"}),
	)
	t.Cleanup(func() { _ = f.env.Client.Delete(ctx, other) })
	viaConfigMap := func(s *kustomizev1.KustomizationSpec) {
		s.KubeConfig = &meta.KubeConfigReference{ConfigMapRef: &meta.LocalObjectReference{Name: "access-generic"}}
	}

	k := f.kustomization("remote", "./app", viaConfigMap)
	f.env.Create(t, k)
	f.waitApplied(k, "main@sha1:"+sha)
	if cm := f.configMap("written-remotely"); cm.Data["k"] != "v" {
		t.Errorf("ConfigMap data %v", cm.Data)
	}
	f.env.RequestReconcile(t, k)
	f.env.WaitForReady(t, k, nil)
	if n := tokenRequestsOf(f.ns, "remote-writer"); n != 1 {
		t.Errorf("%d TokenRequests for two reconciles, want 1 (cached)", n)
	}

	// A controller without the ObjectLevelWorkloadIdentity gate refuses the
	// ServiceAccount the ConfigMap names, with Flux's words.
	gateOff := &ClientFactory{Config: f.env.Config, Scheme: f.env.Scheme, Reader: f.env.Client,
		KubeConfigIdentity: &auth.Settings{Client: f.env.Client}}
	_, err := gateOff.For(ctx, k)
	if want := "KubeConfig ConfigMap '" + f.ns + "/access-generic': ObjectLevelWorkloadIdentity feature gate is not enabled"; err == nil ||
		err.Error() != want || errs.Reason(err, "") != meta.FeatureGateDisabledReason || !errs.IsStalling(err) {
		t.Errorf("gate off: err = %v (reason %q), want stalling %s %q", err, errs.Reason(err, ""), meta.FeatureGateDisabledReason, want)
	}

	elsewhere := f.kustomization("elsewhere", "./app", func(s *kustomizev1.KustomizationSpec) {
		viaConfigMap(s)
		s.TargetNamespace = other.Name
	})
	f.env.Create(t, elsewhere)
	ready := f.waitFailed(elsewhere, "main@sha1:"+sha, meta.ReconciliationFailedReason)
	if want := `User "system:serviceaccount:` + f.ns + `:remote-writer" cannot`; !strings.Contains(ready.Message, want) {
		t.Errorf("Ready %q does not name the ServiceAccount the token is of (%s)", ready.Message, want)
	}
}

// TestKubeConfigConfigMapRefusals: bad ConfigMaps stall with what to fix,
// a cloud's cluster named in a form that cloud does not have among them
// (the clouds' providers themselves: internal/apply/restconfig).
func TestKubeConfigConfigMapRefusals(t *testing.T) {
	f, _ := newFixture(t, map[string]string{"app/a.yaml": configMapYAML("never", "k", "v")})
	tests := []struct {
		name, provider string
		data           map[string]string
		want           string
	}{
		{"aws", "aws", map[string]string{restconfig.KeyCluster: "prod"}, "invalid EKS cluster ARN: 'prod'"},
		{"azure", "azure", map[string]string{restconfig.KeyCluster: "prod"}, "invalid AKS cluster ID: 'prod'"},
		{"gcp", "gcp", map[string]string{restconfig.KeyCluster: "prod"}, "invalid GKE cluster ID: 'prod'"},
		{"unknown", "digitalocean", nil, "provider 'digitalocean' is not one of aws, azure, gcp or generic"},
		{"no-address", "generic", map[string]string{restconfig.KeyAddress: ""}, "key 'address' is required for provider 'generic'"},
		{"http", "generic", map[string]string{restconfig.KeyAddress: "http://127.0.0.1:6443"}, "scheme 'http' is not https"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cm := f.access(tt.provider, tt.data)
			cm.Name = "access-" + tt.name
			f.env.Create(t, cm)
			k := f.kustomization(tt.name, "./app", func(s *kustomizev1.KustomizationSpec) {
				s.KubeConfig = &meta.KubeConfigReference{ConfigMapRef: &meta.LocalObjectReference{Name: cm.Name}}
			})
			f.env.Create(t, k)
			ready := f.waitFailed(k, "", restconfig.InvalidKubeConfigReason)
			if !strings.Contains(ready.Message, tt.want) || !strings.Contains(ready.Message, "KubeConfig ConfigMap '"+f.ns+"/"+cm.Name+"'") ||
				!conditions.IsTrue(k, meta.StalledCondition) {
				t.Errorf("Ready %q (stalled %v), want it to name the ConfigMap and say %q", ready.Message, conditions.IsTrue(k, meta.StalledCondition), tt.want)
			}
		})
	}
}

// access is ConfigMap "access-PROVIDER" pointing at the test API server
// with its CA and an audience it accepts; data adds or, when empty,
// removes keys.
func (f *fixture) access(provider string, data map[string]string) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "access-" + provider, Namespace: f.ns}, Data: map[string]string{
		restconfig.KeyProvider:  provider,
		restconfig.KeyAddress:   f.env.Config.Host,
		restconfig.KeyCA:        string(f.env.Config.CAData),
		restconfig.KeyAudiences: apiAudience,
	}}
	for k, v := range data {
		if v == "" {
			delete(cm.Data, k)
			continue
		}
		cm.Data[k] = v
	}
	return cm
}
