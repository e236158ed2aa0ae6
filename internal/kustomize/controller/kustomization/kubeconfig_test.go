package kustomization

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
)

// TestKubeConfigTargetsARemoteCluster applies through spec.kubeConfig (the
// "remote" cluster is the same API server, reached with the kubeconfig's own
// credentials), and refuses kubeconfigs that would run a program or skip
// TLS verification unless the controller allows them.
func TestKubeConfigTargetsARemoteCluster(t *testing.T) {
	f, sha := newFixture(t, map[string]string{"app/a.yaml": configMapYAML("remote-a", "k", "v")})
	secrets := map[string][]byte{
		"good": testenv.KubeConfig(t, f.env.Config, nil),
		"exec": testenv.KubeConfig(t, f.env.Config, func(kc *clientcmdapi.Config) {
			kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{Command: "/bin/true", APIVersion: "client.authentication.k8s.io/v1"}}
		}),
		"insecure": testenv.KubeConfig(t, f.env.Config, func(kc *clientcmdapi.Config) {
			kc.Clusters["remote"].InsecureSkipTLSVerify = true
			kc.Clusters["remote"].CertificateAuthorityData = nil
		}),
	}
	for name, data := range secrets {
		f.env.Create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "kc-" + name, Namespace: f.ns}, Data: map[string][]byte{"value": data}})
	}
	remote := func(secret string) func(*kustomizev1.KustomizationSpec) {
		return func(s *kustomizev1.KustomizationSpec) {
			s.KubeConfig = &meta.KubeConfigReference{SecretRef: &meta.SecretKeyReference{Name: secret}}
		}
	}

	good := f.kustomization("remote", "./app", remote("kc-good"))
	f.env.Create(t, good)
	f.waitApplied(good, "main@sha1:"+sha)
	f.configMap("remote-a")

	for _, tt := range []struct{ secret, want string }{
		{"kc-exec", "exec credential plugin, which is refused unless the controller runs with --insecure-kubeconfig-exec"},
		{"kc-insecure", "skips TLS verification, which is refused unless the controller runs with --insecure-kubeconfig-tls"},
	} {
		k := f.kustomization(strings.TrimPrefix(tt.secret, "kc-"), "./app", remote(tt.secret))
		f.env.Create(t, k)
		ready := f.waitFailed(k, "", "InvalidKubeConfig")
		if !strings.Contains(ready.Message, tt.want) || !conditions.IsTrue(k, meta.StalledCondition) {
			t.Errorf("%s: Ready %q, stalled %v", tt.secret, ready.Message, conditions.IsTrue(k, meta.StalledCondition))
		}
	}
}
