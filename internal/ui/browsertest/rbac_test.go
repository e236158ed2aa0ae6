package browsertest

import (
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// viewer is a user who may read every toolkit object and Event but change
// none: a ClusterRole of get, list and watch bound to them alone. The
// returned config impersonates them, as a kubeconfig with `as:` would.
func viewer(t *testing.T, f *fleet) (*rest.Config, string) {
	t.Helper()
	user := "viewer-" + f.ns
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{"source.toolkit.fluxcd.io", "kustomize.toolkit.fluxcd.io", "helm.toolkit.fluxcd.io",
				"notification.toolkit.fluxcd.io", "image.toolkit.fluxcd.io", "", "events.k8s.io"},
			Resources: []string{"*"},
			Verbs:     []string{"get", "list", "watch"},
		}},
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: user},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	}
	f.env.Create(t, role, binding)
	t.Cleanup(func() {
		_ = f.env.Client.Delete(t.Context(), binding)
		_ = f.env.Client.Delete(t.Context(), role)
	})
	cfg := rest.CopyConfig(f.env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	return cfg, user
}

func TestUserWithoutPatchSeesWhyTheButtonIsDisabled(t *testing.T) {
	f := newFleet(t)
	cfg, user := viewer(t, f)
	b := newUI(t, cfg)
	if who := b.str(`document.getElementById('whoami').textContent`); !strings.Contains(who, user) {
		t.Errorf("whoami says %q, want %s", who, user)
	}
	b.open(ksURL(f.ns, "apps"))
	b.screenshot("denied")
	for _, action := range []string{"reconcile", "reconcile-source", "suspend"} {
		var got struct {
			Disabled    bool
			Denied      string
			Why         string
			DescribedBy string
			Visible     bool
		}
		b.eval(`(() => {
			const btn = document.getElementById('action-`+action+`');
			const why = document.getElementById(btn.getAttribute('aria-describedby'));
			const r = why.getBoundingClientRect();
			return {disabled: btn.disabled, denied: btn.dataset.denied, why: why.textContent,
				describedBy: btn.getAttribute('aria-describedby'), visible: r.width > 0 && r.height > 0};
		})()`, &got)
		if !got.Disabled || got.Denied != "true" {
			t.Errorf("%s: disabled %v, denied %q; want a button disabled by RBAC", action, got.Disabled, got.Denied)
		}
		if !strings.Contains(got.Why, user) || !strings.Contains(got.Why, "patch") || !strings.Contains(got.Why, "kustomizations") {
			t.Errorf("%s: the reason shown is %q, want who cannot patch what", action, got.Why)
		}
		if got.DescribedBy != "action-"+action+"-why" || !got.Visible {
			t.Errorf("%s: aria-describedby %q, reason visible %v", action, got.DescribedBy, got.Visible)
		}
	}
}
