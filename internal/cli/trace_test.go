package cli_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/weir-gitops/weir/internal/devenv/testenv"
)

func TestTrace(t *testing.T) {
	// Flux prints condition times in local time; the golden files hold UTC.
	local := time.Local
	time.Local = time.UTC
	t.Cleanup(func() { time.Local = local })

	env := testenv.Get(t)
	ns := env.Namespace(t)
	objs := applyFixture(t, "trace/objects.yaml", ns)
	// A Secret owned by the labelled ConfigMap is traced through its owner.
	var settings *corev1.ConfigMap
	for _, o := range objs {
		if o.GetKind() == "ConfigMap" && o.GetName() == "settings" {
			settings = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: o.GetName(), UID: o.GetUID()}}
		}
	}
	env.Create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "owned", Namespace: ns,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: settings.Name, UID: settings.UID}}}})

	steps := []struct {
		golden string
		code   int
		args   []string
	}{
		{"trace/git.golden", 0, []string{"settings", "--kind=ConfigMap", "--api-version=v1"}},
		{"trace/owner.golden", 0, []string{"secret/owned"}},
		{"trace/oci.golden", 0, []string{"configmap", "from-oci"}},
		{"trace/helm.golden", 0, []string{"cm/podinfo-values"}},
		{"trace/two.golden", 0, []string{"cm/settings", "cm/from-oci"}},
		{"trace/chart.golden", 0, []string{ns + "-podinfo", "--kind=HelmChart", "--api-version=source.toolkit.fluxcd.io/v1"}},
		{"trace/chart-applied.golden", 0, []string{"helmchart/hello"}},
		{"trace/not-managed.golden", 1, []string{"cm/hand-made"}},
		{"trace/missing.golden", 1, []string{"missing", "--kind=ConfigMap", "--api-version=v1"}},
		{"trace/no-kind.golden", 1, []string{"settings", "--api-version=v1"}},
	}
	for _, s := range steps {
		res := weir(t, append(append([]string{"trace"}, s.args...), "-n", ns)...)
		if res.Code != s.code {
			t.Errorf("trace %v: exit %d, want %d\n%s", s.args, res.Code, s.code, res.Stderr)
		}
		assertGolden(t, s.golden, res.Output(), ns)
	}
}
