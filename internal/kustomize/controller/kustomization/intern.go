package kustomization

import (
	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/internal/runtime/intern"
)

// InternStrings gives the strings a fleet of Kustomizations repeats in its
// spec and status one shared copy from t (the metadata and the conditions
// are every kind's, see internal/app's cache transform): the source
// reference, path, target namespace and service account, the revisions,
// the history's reason and revision, the inventory's API versions. The
// manager's cache stores each Kustomization after this, so an idle fleet
// holds one "main@sha1:…" instead of one per Kustomization and field.
func InternStrings(t *intern.Table, k *kustomizev1.Kustomization) {
	s := &k.Spec
	ref := &s.SourceRef
	ref.APIVersion, ref.Kind, ref.Name, ref.Namespace = t.String(ref.APIVersion), t.String(ref.Kind), t.String(ref.Name), t.String(ref.Namespace)
	s.Path, s.TargetNamespace, s.ServiceAccountName = t.String(s.Path), t.String(s.TargetNamespace), t.String(s.ServiceAccountName)
	st := &k.Status
	st.LastHandledReconcileAt = t.String(st.LastHandledReconcileAt)
	st.LastAppliedRevision = t.String(st.LastAppliedRevision)
	st.LastAppliedOriginRevision = t.String(st.LastAppliedOriginRevision)
	st.LastAttemptedRevision = t.String(st.LastAttemptedRevision)
	t.History(st.History)
	if inv := st.Inventory; inv != nil {
		for i := range inv.Entries {
			inv.Entries[i].Version = t.String(inv.Entries[i].Version)
		}
	}
}
