package aws

import (
	"fmt"
	"regexp"
	"sync"
)

// registryPattern is the ECR host pattern Flux takes from the Amazon ECR
// credential helper: the commercial, China and isolated partitions, with
// or without FIPS.
const registryPattern = `([0-9+]*).dkr.ecr(?:-fips)?\.([^/.]*)\.(amazonaws\.com[.cn]*|amazonaws\.eu|sc2s\.sgov\.gov|c2s\.ic\.gov|cloud\.adc-e\.uk|csp\.hci\.ic\.gov)`

// Compiled on first use: bounded repetitions compile to a large program
// that every process would otherwise build at start (design 0038).
var registryRegexp = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(registryPattern) })

// PublicRegistry is ECR Public's host; its tokens come from us-east-1.
const (
	PublicRegistry = "public.ecr.aws"
	publicRegion   = "us-east-1"
)

// Registry is an ECR registry as a login needs it.
type Registry struct {
	// Host is the registry host.
	Host string
	// Region is where its tokens come from (us-east-1 for ECR Public).
	Region string
	// Public is ECR Public.
	Public bool
}

// key names the registry in cache keys: the region for private ECR (one
// token serves every registry of an account in a region), the host for
// ECR Public.
func (r Registry) key() string {
	if r.Public {
		return PublicRegistry
	}
	return r.Region
}

// ParseRegistry reads an ECR registry host, with Flux's error for any
// other host.
func ParseRegistry(host string) (Registry, error) {
	if host == PublicRegistry {
		return Registry{Host: host, Region: publicRegion, Public: true}, nil
	}
	m := registryRegexp().FindStringSubmatch(host)
	if len(m) < 3 {
		return Registry{}, fmt.Errorf("invalid AWS registry: '%s'. must match %s", host, registryPattern)
	}
	return Registry{Host: host, Region: m[2]}, nil
}
