package release

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/resource"
	"k8s.io/client-go/rest"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
	"k8s.io/kubectl/pkg/validation"
)

// factoryTTL bounds how long what a shared factory learnt about a cluster
// (discovery, which kinds the server validates) is trusted.
const factoryTTL = 10 * time.Minute

// Factories shares, per cluster and identity, the kubectl factory Helm's
// kube client builds objects with, so that discovery and the server's
// field-validation support are learnt once rather than in every
// reconciliation. Without it each install or upgrade downloaded and parsed
// the OpenAPI v3 documents of every group-version its objects use: 63 % of
// the controller's CPU in BenchmarkHelmReleaseCRDs. The zero value is
// ready to use and safe for concurrent use.
type Factories struct {
	mu      sync.Mutex
	entries map[string]*factoryEntry
	// now is the clock; time.Now when nil.
	now func() time.Time
}

type factoryEntry struct {
	factory *sharedFactory
	created time.Time
}

// get returns the shared factory of cfg's cluster and identity, building
// one when there is none or the one there is older than factoryTTL.
func (fs *Factories) get(cfg *rest.Config) *sharedFactory {
	now := time.Now
	if fs.now != nil {
		now = fs.now
	}
	key := identityKey(cfg)
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.entries == nil {
		fs.entries = map[string]*factoryEntry{}
	}
	t := now()
	for k, e := range fs.entries {
		if t.Sub(e.created) > factoryTTL {
			delete(fs.entries, k)
		}
	}
	if e, ok := fs.entries[key]; ok {
		return e.factory
	}
	f := newSharedFactory(cfg)
	fs.entries[key] = &factoryEntry{factory: f, created: t}
	return f
}

// identityKey names the cluster and the identity cfg connects as; the
// credentials are hashed, never kept.
func identityKey(cfg *rest.Config) string {
	h := sha256.New()
	for _, part := range []string{
		cfg.Host, cfg.APIPath, cfg.Username, cfg.Password, cfg.BearerToken, cfg.BearerTokenFile,
		cfg.Impersonate.UserName, cfg.Impersonate.UID, strings.Join(cfg.Impersonate.Groups, ","),
		string(cfg.CertData), cfg.CertFile, string(cfg.KeyData), cfg.KeyFile,
		string(cfg.CAData), cfg.CAFile, cfg.ServerName, fmt.Sprint(cfg.Insecure),
		fmt.Sprint(cfg.ExecProvider), fmt.Sprint(cfg.AuthProvider),
	} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// sharedFactory is kubectl's factory on a Getter, with a validator whose
// answers to "does the server validate fields of this kind" are kept.
type sharedFactory struct {
	cmdutil.Factory
	getter *Getter

	// caps keeps .Capabilities between actions; nil when its probe could
	// not be built, and Helm reads discovery itself.
	caps *sharedCapabilities

	mu        sync.RWMutex
	supported map[schema.GroupVersionKind]error
	// asking makes releases that need the same unknown kind at once wait
	// for one answer: each answer parses the group-version's OpenAPI v3
	// document, and ten releases parsing apps/v1 together were 64 % of
	// weir-controller's heap at the peak of 100 installs.
	asking singleflight.Group
}

func newSharedFactory(cfg *rest.Config) *sharedFactory {
	g := NewGetter(cfg, "")
	caps, err := newSharedCapabilities(cfg)
	if err != nil {
		caps = nil
	}
	return &sharedFactory{Factory: cmdutil.NewFactory(g), getter: g, caps: caps, supported: map[schema.GroupVersionKind]error{}}
}

// Validator is kubectl's validator (client-side schema validation only
// where the server cannot validate fields itself) with this factory as the
// field-validation verifier.
func (f *sharedFactory) Validator(directive string) (validation.Schema, error) {
	if directive == "Ignore" {
		return validation.NullSchema{}, nil
	}
	s := validation.ConjunctiveSchema{validation.NewSchemaValidation(f), validation.NoDoubleKeySchema{}}
	return validation.NewParamVerifyingSchema(s, f, directive), nil
}

// HasSupport reports whether the server validates fields of gvk, from the
// OpenAPI v3 document of its group-version. Answers are kept; an error
// (typically a group-version the cached discovery does not know yet, a CRD
// created a moment ago) is not: discovery is invalidated and asked once
// more.
func (f *sharedFactory) HasSupport(gvk schema.GroupVersionKind) error {
	f.mu.RLock()
	err, ok := f.supported[gvk]
	f.mu.RUnlock()
	if ok {
		return err
	}
	_, err, _ = f.asking.Do(gvk.String(), func() (any, error) { return nil, f.answer(gvk) })
	return err
}

// answer asks the server whether it validates fields of gvk and keeps
// the answer when it is one.
func (f *sharedFactory) answer(gvk schema.GroupVersionKind) error {
	f.mu.RLock()
	err, ok := f.supported[gvk]
	f.mu.RUnlock()
	if ok {
		return err
	}
	err = f.verify(gvk)
	if err != nil && !resource.IsParamUnsupportedError(err) {
		if dc, derr := f.ToDiscoveryClient(); derr == nil {
			dc.Invalidate()
		}
		if err = f.verify(gvk); err != nil && !resource.IsParamUnsupportedError(err) {
			return err
		}
	}
	f.mu.Lock()
	f.supported[gvk] = err
	f.mu.Unlock()
	return err
}

func (f *sharedFactory) verify(gvk schema.GroupVersionKind) error {
	dyn, err := f.DynamicClient()
	if err != nil {
		return fmt.Errorf("building dynamic client: %w", err)
	}
	dc, err := f.ToDiscoveryClient()
	if err != nil {
		return fmt.Errorf("building discovery client: %w", err)
	}
	if dc == nil {
		return errors.New("no discovery client")
	}
	return resource.NewQueryParamVerifierV3(dyn, dc.OpenAPIV3(), resource.QueryParamFieldValidation).HasSupport(gvk)
}
