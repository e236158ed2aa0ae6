package applymemo

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
)

// TestMemoBelongsToTheIdentity checks that a memo is not carried over to
// another service account, a re-created Kustomization, or a remote
// cluster.
func TestMemoBelongsToTheIdentity(t *testing.T) {
	var memos Memos
	k := &kustomizev1.Kustomization{}
	k.Name, k.Namespace, k.UID = "app", "ns", "uid-1"
	first := memos.Of(k)
	if first == nil || memos.Of(k) != first {
		t.Fatal("the same Kustomization got another memo")
	}
	k.Spec.ServiceAccountName = "tenant"
	if memos.Of(k) == first {
		t.Error("a new service account kept the memo")
	}
	second := memos.Of(k)
	k.UID = "uid-2"
	if memos.Of(k) == second {
		t.Error("a re-created Kustomization kept the memo")
	}
	k.Spec.KubeConfig = &meta.KubeConfigReference{}
	if memos.Of(k) != nil {
		t.Error("a Kustomization applying to a remote cluster got a memo")
	}
	memos.Forget(types.NamespacedName{Namespace: k.Namespace, Name: k.Name})
	if len(memos.memos) != 0 {
		t.Error("Forget left the memo")
	}
}
