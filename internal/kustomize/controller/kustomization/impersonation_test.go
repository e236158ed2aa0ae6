package kustomization

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
)

// TestImpersonationRefusesWhatTheAccountMayNotDo applies, as a service
// account allowed to manage ConfigMaps in its namespace only, a build that
// also holds a ClusterRoleBinding. The API server's 403 must fail the
// reconcile, and nothing of the build may be created: the stage is dry-run
// as a whole before anything is written.
func TestImpersonationRefusesWhatTheAccountMayNotDo(t *testing.T) {
	f, sha := newFixture(t, map[string]string{
		"tenant/cm.yaml": configMapYAML("tenant-config", "k", "v"),
		"tenant/crb.yaml": `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: tenant-escalation
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: cluster-admin
subjects:
- kind: ServiceAccount
  name: tenant
  namespace: default
`,
	})
	ctx := context.Background()
	f.env.Create(t,
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "tenant", Namespace: f.ns}},
		&rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Name: "configmaps", Namespace: f.ns},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"*"}}},
		},
		&rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "tenant-configmaps", Namespace: f.ns},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "configmaps"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "tenant", Namespace: f.ns}},
		},
	)
	k := f.kustomization("tenant", "./tenant", func(s *kustomizev1.KustomizationSpec) { s.ServiceAccountName = "tenant" })
	f.env.Create(t, k)
	ready := f.waitFailed(k, "main@sha1:"+sha, meta.ReconciliationFailedReason)
	if !strings.Contains(ready.Message, "forbidden") || !strings.Contains(ready.Message, "ClusterRoleBinding/tenant-escalation") ||
		!strings.Contains(ready.Message, "system:serviceaccount:"+f.ns+":tenant") {
		t.Errorf("message = %q, want the API server's 403 naming the object and the account", ready.Message)
	}
	if !f.absent("tenant-config") {
		t.Error("the ConfigMap of a refused stage was created")
	}
	var crb rbacv1.ClusterRoleBinding
	if err := f.env.Client.Get(ctx, clientKey("", "tenant-escalation"), &crb); err == nil {
		t.Error("the ClusterRoleBinding was created")
	}
}
