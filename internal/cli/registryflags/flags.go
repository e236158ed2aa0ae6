// Package registryflags holds the flags every `… artifact` verb shares with
// the flux CLI (--creds, --provider, --insecure-registry) and turns them into
// a go-containerregistry reference and options, so the verbs parse URLs and
// find credentials one way.
package registryflags

import (
	"context"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/spf13/pflag"

	"github.com/weir-gitops/weir/internal/source/oci"
)

// Flags are the registry flags of one command.
type Flags struct {
	Creds    string
	Provider string
	Insecure bool
}

// AddFlags registers the flags on fs with flux's names and defaults.
func (f *Flags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.Creds, "creds", "", "credentials for OCI registry in the format <username>[:<password>] if --provider is generic")
	fs.StringVar(&f.Provider, "provider", "generic", "the OCI provider name, available options are: (generic)")
	fs.BoolVar(&f.Insecure, "insecure-registry", false, "allows artifacts to be pushed and pulled without TLS")
}

// Reference parses url (oci://host/repo:tag or @digest) and returns it with
// the remote options for ctx: --creds, else the docker config keychain.
func (f *Flags) Reference(ctx context.Context, url string) (name.Reference, []remote.Option, error) {
	if f.Provider != "generic" {
		return nil, nil, fmt.Errorf("provider %q is not supported, only 'generic'", f.Provider)
	}
	ref, err := oci.ParseArtifactURL(url, f.Insecure)
	if err != nil {
		return nil, nil, err
	}
	opts, err := oci.RemoteOptions(ctx, f.Creds)
	if err != nil {
		return nil, nil, err
	}
	return ref, opts, nil
}

// Repository parses url (oci://host/repo, no tag) as `list artifacts` takes it.
func (f *Flags) Repository(ctx context.Context, url string) (name.Repository, []remote.Option, error) {
	if f.Provider != "generic" {
		return name.Repository{}, nil, fmt.Errorf("provider %q is not supported, only 'generic'", f.Provider)
	}
	repo, err := oci.ParseURL(url, f.Insecure)
	if err != nil {
		return name.Repository{}, nil, err
	}
	opts, err := oci.RemoteOptions(ctx, f.Creds)
	if err != nil {
		return name.Repository{}, nil, err
	}
	return repo, opts, nil
}
