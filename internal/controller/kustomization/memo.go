package kustomization

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/internal/ssa"
)

// applyMemos keeps one ssa.Memo per Kustomization, so that a reconcile
// whose objects nobody wrote since the last one skips their dry-runs
// (docs/design/0020-large-and-idle-fleets.md). A memo belongs to the
// Kustomization's uid and to the identity it applies as: a new
// Kustomization of the same name, or a new spec.serviceAccountName (whose
// permissions only a dry-run would test), starts from nothing. Kustomizations
// that apply to a remote cluster get none: the kubeconfig Secret may point
// elsewhere or carry other credentials from one reconcile to the next.
// The zero value is ready to use.
type applyMemos struct {
	mu    sync.Mutex
	memos map[types.NamespacedName]applyMemo
}

type applyMemo struct {
	uid      types.UID
	identity string
	memo     *ssa.Memo
}

// of returns obj's memo, nil when it gets none.
func (a *applyMemos) of(obj *kustomizev1.Kustomization) *ssa.Memo {
	if obj.Spec.KubeConfig != nil {
		return nil
	}
	name := types.NamespacedName{Namespace: obj.Namespace, Name: obj.Name}
	a.mu.Lock()
	defer a.mu.Unlock()
	m, ok := a.memos[name]
	if ok && m.uid == obj.UID && m.identity == obj.Spec.ServiceAccountName {
		return m.memo
	}
	if a.memos == nil {
		a.memos = map[types.NamespacedName]applyMemo{}
	}
	m = applyMemo{uid: obj.UID, identity: obj.Spec.ServiceAccountName, memo: ssa.NewMemo()}
	a.memos[name] = m
	return m.memo
}

// forget drops the memo of name (the Kustomization is gone).
func (a *applyMemos) forget(name types.NamespacedName) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.memos, name)
}
