package ssa

import (
	"crypto/sha256"
	"encoding/base64"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
)

// AppliedDigest digests what of obj's metadata decides whether applying
// the same manifest again as fieldManager changes anything, other than
// the values of the fields the manifest sets: the managed-fields entries
// of every applier (any manager's Apply operation, ours among them) and
// of the managers Apply takes fields over from (takeoverFrom), the
// annotations and labels Apply removes, and the policy annotations it
// reads (reconcile, ssa).
//
// The digest stays the same while others only write fields nobody applies
// (a Deployment's status, its revision annotation, a ReplicaSet's scale):
// no write can change a field fieldManager owns without taking the field's
// ownership from it, which changes its entry (server-side apply's
// ownership rules), and a field removed is removed from every entry. An
// object whose digest is the one recorded when its manifest was last in
// place still holds that manifest, however often its resourceVersion
// moved since. The empty string means obj records no managed fields.
func AppliedDigest(obj metav1.Object, fieldManager string, overrides []string) string {
	entries := obj.GetManagedFields()
	if len(entries) == 0 {
		return ""
	}
	from := takeoverFrom(fieldManager, overrides)
	h := sha256.New()
	var kept []string
	for _, e := range entries {
		if e.Operation != metav1.ManagedFieldsOperationApply && !matchesAny(e, from) {
			continue
		}
		var raw []byte
		if e.FieldsV1 != nil {
			raw = e.FieldsV1.GetRawBytes()
		}
		var at string
		if e.Time != nil {
			at = e.Time.UTC().Format("2006-01-02T15:04:05Z")
		}
		kept = append(kept, strings.Join([]string{e.Manager, string(e.Operation), e.APIVersion, e.Subresource, at, string(raw)}, "\x00"))
	}
	slices.Sort(kept)
	for _, k := range kept {
		h.Write([]byte(k))
		h.Write([]byte{1})
	}
	annotations, labels := obj.GetAnnotations(), obj.GetLabels()
	for _, key := range cleanupAnnotations {
		_, ok := annotations[key]
		h.Write([]byte{2, boolByte(ok)})
	}
	for _, key := range cleanupLabels {
		_, ok := labels[key]
		h.Write([]byte{3, boolByte(ok)})
	}
	for _, key := range []string{kustomizev1.ReconcileAnnotation, kustomizev1.SSAAnnotation} {
		h.Write([]byte("\x04" + annotations[key] + "\x00" + labels[key]))
	}
	sum := h.Sum(nil)
	return base64.RawStdEncoding.EncodeToString(sum[:18])
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// matchesAny reports whether e is the entry of one of the managers of
// from, in its operation.
func matchesAny(e metav1.ManagedFieldsEntry, from []managerMatch) bool {
	for _, m := range from {
		if e.Operation == m.op && strings.HasPrefix(e.Manager, m.prefix) {
			return true
		}
	}
	return false
}
