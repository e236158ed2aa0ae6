package render

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/internal/auth"
	"github.com/weir-gitops/weir/internal/auth/vault"
	"github.com/weir-gitops/weir/internal/kustomize/decrypt"
)

// vaultLogin is decrypt.Options.Vault for one build: the Vault token of
// the build's identity at a SOPS file's vault_address, logged in to with a
// ServiceAccount token when --sops-vault-configmap lists the address
// (internal/auth/vault). The ConfigMap is read, uncached, when a Vault
// key first needs a token, and once per build.
type vaultLogin struct {
	reader   client.Reader
	key      client.ObjectKey
	settings *auth.Settings
	id       auth.Identity

	once   sync.Once
	config *vault.Config
	err    error
}

func (v *vaultLogin) load(ctx context.Context) (*vault.Config, error) {
	v.once.Do(func() {
		var cm corev1.ConfigMap
		if err := v.reader.Get(ctx, v.key, &cm); err != nil {
			v.err = fmt.Errorf("cannot get SOPS Vault ConfigMap '%s': %w", v.key, err)
			return
		}
		v.config, v.err = vault.ParseConfig(cm.Data)
		if v.err != nil {
			v.err = fmt.Errorf("SOPS Vault ConfigMap '%s': %w", v.key, v.err)
		}
	})
	return v.config, v.err
}

// token implements decrypt.Options.Vault.
func (v *vaultLogin) token(ctx context.Context, address string) (string, error) {
	config, err := v.load(ctx)
	if err != nil {
		return "", err
	}
	in, ok := config.Instance(address)
	if !ok {
		return "", fmt.Errorf("Vault address '%s' is %w ConfigMap '%s'", address, decrypt.ErrVaultAddressNotListed, v.key) //nolint:staticcheck // ST1005: the message names Vault, a proper noun
	}
	tok, err := vault.Default.Login(ctx, v.settings, v.id, in)
	if err != nil {
		return "", err
	}
	return tok.Value, nil
}

// refused implements decrypt.Options.VaultRefused: the login token of
// address that transit refused leaves the cache, so the next token is a
// new login's.
func (v *vaultLogin) refused(ctx context.Context, address, token string) {
	config, err := v.load(ctx)
	if err != nil {
		return
	}
	in, ok := config.Instance(address)
	if !ok {
		return
	}
	if err := vault.Default.Forget(v.settings, v.id, in, token); err == nil {
		ctrl.LoggerFrom(ctx).Info("Vault refused a login token, logging in again", "address", in.Address, "loginPath", in.LoginPath)
	}
}
