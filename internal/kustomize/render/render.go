package render

import (
	"context"
	"io/fs"
	"maps"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/internal/auth"
	"github.com/weir-gitops/weir/internal/kustomize"
)

// Options are the controller settings that shape a build.
type Options struct {
	// NoRemoteBases is --no-remote-bases.
	NoRemoteBases bool
	// AllowUndefinedVariables turns strict substitution off.
	AllowUndefinedVariables bool
	// Offline reads nothing from the cluster: substituteFrom objects are
	// skipped (spec.postBuild.substitute still applies) and SOPS content
	// is left encrypted rather than refused. For `weir build --dry-run`.
	Offline bool
	// KeepEncrypted leaves SOPS content encrypted when spec.decryption is
	// set, instead of reading its key Secret: for an offline analysis that
	// was given no key. Without spec.decryption, SOPS content still fails
	// the build with kustomize.ErrDecryptionRequired, as in the cluster.
	KeepEncrypted bool
	// SkipChecksum is kustomize.BuildOptions.SkipChecksum.
	SkipChecksum bool
	// Runs is kustomize.BuildOptions.Runs: the controller plans the first
	// objects of a large build while the rest is built.
	Runs func(kinds []schema.GroupKind) func([]*unstructured.Unstructured) `json:"-"`
	// Tree is kustomize.BuildOptions.Tree: the source in memory, in place
	// of the root directory.
	Tree fs.FS `json:"-"`
	// Exclude is kustomize.BuildOptions.Exclude: paths a generated
	// kustomization leaves out. The controller never sets it.
	Exclude []string `json:",omitempty"`
	// Identity, when set, is the controller's cloud identity for
	// decryption: the ObjectLevelWorkloadIdentity gate,
	// --default-decryption-service-account, the token cache and the
	// client making TokenRequests. Nil uses the caller's environment and
	// ignores spec.decryption.serviceAccountName (`weir build`).
	Identity *auth.Settings `json:"-"`
	// SOPSAgeSecret is --sops-age-secret: the Secret whose age keys
	// decrypt for a Kustomization whose spec.decryption has no secretRef.
	SOPSAgeSecret *client.ObjectKey `json:"-"`
	// SOPSVaultConfigMap is --sops-vault-configmap: the ConfigMap listing
	// the Vault/OpenBao instances a decryption logs in to with its
	// ServiceAccount's token (internal/auth/vault). Used only with
	// Identity; nil turns the login off.
	SOPSVaultConfigMap *client.ObjectKey `json:"-"`
	// Variables, when not nil, are spec.postBuild's variables as Variables
	// already read them for this build: the build substitutes them and
	// reads no substituteFrom object again.
	Variables map[string]string `json:"-"`
}

// Kustomization builds obj's manifests from the source tree at root exactly
// as the controller does: spec fields merged into the kustomization,
// variables from spec.postBuild (substituteFrom read through reader), SOPS
// decryption with the keys of spec.decryption.secretRef. With opts.Tree
// set, the source tree is that and root is not read.
func Kustomization(ctx context.Context, reader client.Reader, obj *kustomizev1.Kustomization, root string, opts Options) (*kustomize.Result, error) {
	build := kustomize.FromSpec(root, &obj.Spec)
	build.NoRemoteBases = opts.NoRemoteBases
	build.SkipChecksum = opts.SkipChecksum
	build.Runs = opts.Runs
	build.Tree = opts.Tree
	build.Exclude = opts.Exclude
	if build.PostBuild != nil {
		vars := map[string]string{}
		switch {
		case opts.Offline:
			maps.Copy(vars, obj.Spec.PostBuild.Substitute)
		case opts.Variables != nil:
			maps.Copy(vars, opts.Variables)
		default:
			var err error
			if vars, err = Variables(ctx, reader, obj); err != nil {
				return nil, err
			}
		}
		build.PostBuild.Vars = vars
		build.PostBuild.Options.AllowUndefined = opts.AllowUndefinedVariables
	}
	switch {
	case opts.Offline, opts.KeepEncrypted && obj.Spec.Decryption != nil:
		build.AllowEncrypted = true
	default:
		if err := configureDecryption(ctx, reader, obj, opts, &build); err != nil {
			return nil, err
		}
	}
	return kustomize.Build(ctx, build)
}
