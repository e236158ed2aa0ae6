package helmrelease

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/apply/restconfig"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
)

// TestImpersonationNeedsTheAccountsRBAC installs as spec.serviceAccountName.
// Without RBAC the API server refuses the account and Ready names it; once
// a RoleBinding grants it the namespace, the release installs.
func TestImpersonationNeedsTheAccountsRBAC(t *testing.T) {
	f := newFixture(t)
	f.publish(newChart("1.0.0"))
	f.env.Create(t, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "tenant", Namespace: f.ns}})
	hr := f.helmRelease("app", func(s *helmv2.HelmReleaseSpec) { s.ServiceAccountName = "tenant" })
	f.env.Create(t, hr)

	user := restconfig.ServiceAccountUser(f.ns, "tenant")
	f.waitRefused(hr, user)
	t.Logf("without RBAC: %s", conditions.Get(hr, meta.ReadyCondition).Message)
	if got := f.storageSecrets("app"); len(got) != 0 {
		t.Errorf("storage Secrets written without RBAC: %v", got)
	}

	f.env.Create(t,
		&rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Name: "tenant", Namespace: f.ns},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}},
		},
		&rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "tenant", Namespace: f.ns},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "tenant"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "tenant", Namespace: f.ns}},
		},
	)
	f.env.RequestReconcile(t, hr)
	f.waitReady(hr, fmt.Sprintf("Helm install succeeded for release %s/app.v1 with chart app@1.0.0", f.ns))
	f.configMap("app-app")
}

// TestKubeConfigInstallsInTheRemoteCluster installs through spec.kubeConfig
// (the "remote" cluster is the test API server, reached with the
// kubeconfig's own credentials), and refuses, Stalled, a kubeconfig that
// would run a program, as the Kustomization does.
func TestKubeConfigInstallsInTheRemoteCluster(t *testing.T) {
	f := newFixture(t)
	f.publish(newChart("1.0.0"))
	secrets := map[string][]byte{
		"kc-good": testenv.KubeConfig(t, f.env.Config, nil),
		"kc-exec": testenv.KubeConfig(t, f.env.Config, func(kc *clientcmdapi.Config) {
			kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{Command: "/bin/true", APIVersion: "client.authentication.k8s.io/v1"}}
		}),
	}
	for name, data := range secrets {
		f.env.Create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns}, Data: map[string][]byte{"value": data}})
	}
	remote := func(secret string) func(*helmv2.HelmReleaseSpec) {
		return func(s *helmv2.HelmReleaseSpec) {
			s.KubeConfig = &meta.KubeConfigReference{SecretRef: &meta.SecretKeyReference{Name: secret}}
		}
	}
	good := f.helmRelease("remote", remote("kc-good"))
	exec := f.helmRelease("exec", remote("kc-exec"))
	f.env.Create(t, good, exec)
	f.waitReady(good, fmt.Sprintf("Helm install succeeded for release %s/remote.v1 with chart app@1.0.0", f.ns))
	f.configMap("remote-app")

	stalled := f.waitCondition(exec, meta.StalledCondition, metav1.ConditionTrue, restconfig.InvalidKubeConfigReason)
	if want := "exec credential plugin, which is refused unless the controller runs with --insecure-kubeconfig-exec"; !strings.Contains(stalled.Message, want) {
		t.Errorf("Stalled message = %q, want it to contain %q", stalled.Message, want)
	}
}

// TestDeletionWithoutItsServiceAccount: a HelmRelease whose impersonated
// account is gone (its namespace is being deleted, say) is let go on
// deletion without an uninstall that can only be refused, as in Flux, so it
// does not hold its namespace's deletion forever.
func TestDeletionWithoutItsServiceAccount(t *testing.T) {
	f := newFixture(t)
	f.publish(newChart("1.0.0"))
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "deployer", Namespace: f.ns}}
	f.env.Create(t, sa,
		&rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "deployer", Namespace: f.ns},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "admin"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "deployer", Namespace: f.ns}},
		})
	hr := f.helmRelease("app", func(s *helmv2.HelmReleaseSpec) { s.ServiceAccountName = "deployer" })
	f.env.Create(t, hr)
	f.waitReady(hr, fmt.Sprintf("Helm install succeeded for release %s/app.v1 with chart app@1.0.0", f.ns))

	if err := f.env.Client.Delete(context.Background(), sa); err != nil {
		t.Fatal(err)
	}
	if err := f.env.Client.Delete(context.Background(), hr); err != nil {
		t.Fatal(err)
	}
	f.waitGone(hr)
	if got := f.storageSecrets("app"); len(got) != 1 {
		t.Errorf("storage Secrets after deletion = %v, want the release left in place", got)
	}
}

// kubeConfigDefaultSA is the test controller's
// --default-kubeconfig-service-account (with ObjectLevelWorkloadIdentity
// on).
const kubeConfigDefaultSA = "kubeconfig-default"

// TestKubeConfigConfigMapInstallsWithTheDefaultAccountsToken installs
// through spec.kubeConfig.configMapRef, provider generic, at the test API
// server's address and CA: the ConfigMap names no ServiceAccount, so the
// token is the lockdown default's. Until a RoleBinding grants that account
// the namespace, the API server refuses it by name; then the release
// installs.
func TestKubeConfigConfigMapInstallsWithTheDefaultAccountsToken(t *testing.T) {
	f := newFixture(t)
	f.publish(newChart("1.0.0"))
	f.env.Create(t,
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: kubeConfigDefaultSA, Namespace: f.ns}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "access", Namespace: f.ns}, Data: map[string]string{
			restconfig.KeyProvider: restconfig.ProviderGeneric, restconfig.KeyAddress: f.env.Config.Host,
			restconfig.KeyCA: string(f.env.Config.CAData), restconfig.KeyAudiences: "https://kubernetes.default.svc.cluster.local",
		}})
	hr := f.helmRelease("remote", func(s *helmv2.HelmReleaseSpec) {
		s.KubeConfig = &meta.KubeConfigReference{ConfigMapRef: &meta.LocalObjectReference{Name: "access"}}
	})
	f.env.Create(t, hr)

	user := restconfig.ServiceAccountUser(f.ns, kubeConfigDefaultSA)
	f.waitRefused(hr, user)

	f.env.Create(t, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: kubeConfigDefaultSA, Namespace: f.ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: kubeConfigDefaultSA, Namespace: f.ns}},
	})
	f.env.RequestReconcile(t, hr)
	f.waitReady(hr, fmt.Sprintf("Helm install succeeded for release %s/remote.v1 with chart app@1.0.0", f.ns))
	f.configMap("remote-app")
}

// waitRefused waits until hr is not Ready because the API server refused
// user (forbidden, naming the user).
func (f *fixture) waitRefused(hr *helmv2.HelmRelease, user string) {
	f.t.Helper()
	testenv.Eventually(f.t, testenv.DefaultTimeout, func(ctx context.Context) (bool, string) {
		if err := f.env.Client.Get(ctx, client.ObjectKeyFromObject(hr), hr); err != nil {
			return false, err.Error()
		}
		r := conditions.Get(hr, meta.ReadyCondition)
		if r == nil {
			return false, "no Ready"
		}
		return r.Status == metav1.ConditionFalse && strings.Contains(r.Message, "forbidden") &&
			strings.Contains(r.Message, `"`+user+`"`), r.Reason + ": " + r.Message
	})
}
