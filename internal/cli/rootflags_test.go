package cli_test

import (
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/weir-gitops/weir/internal/devenv/testenv"
)

// TestNamespaceFollowsKubeContext: with --ns-follows-kube-context and no
// -n, commands work in the namespace of the kubeconfig's context, as the
// flux CLI's flag does; -n still wins, and without the flag the namespace
// stays flux-system whatever the context says.
func TestNamespaceFollowsKubeContext(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	applyFixture(t, "get/objects.yaml", ns)

	cfg, err := clientcmd.LoadFromFile(env.ControlPlane.KubeconfigPath())
	if err != nil {
		t.Fatal(err)
	}
	cfg.Contexts[cfg.CurrentContext].Namespace = ns
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, kubeconfig); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name string
		args []string
		want string // a line of the output; "" for none
	}{
		{"follows the context", []string{"--ns-follows-kube-context"}, "gitrepository.source.toolkit.fluxcd.io/podinfo"},
		{"-n wins", []string{"--ns-follows-kube-context", "-n", "default"}, ""},
		{"off by default", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"--kubeconfig", kubeconfig, "--kube-api-qps", "20", "--kube-api-burst", "40",
				"get", "sources", "git", "-o", "name"}, tt.args...)
			r := weir(t, args...)
			if r.Code != 0 {
				t.Fatalf("exit %d\n%s", r.Code, r.Output())
			}
			has := strings.Contains(r.Stdout, "gitrepository.source.toolkit.fluxcd.io/podinfo")
			if (tt.want != "") != has {
				t.Errorf("output lists podinfo of %s: %v, want %v\n%s", ns, has, tt.want != "", r.Output())
			}
		})
	}
}
