package release

import (
	"fmt"

	rcommon "helm.sh/helm/v4/pkg/release/common"
)

// Unlock marks the newest revision failed when an action died leaving it
// pending (pending-install, pending-upgrade, pending-rollback), which is
// what blocks every later Helm action with "another operation
// (install/upgrade/rollback) is in progress". It returns the status the
// release was stuck in, empty when it was not pending.
func (c *Client) Unlock() (rcommon.Status, error) {
	rls, err := c.cfg.Releases.Last(c.opts.Name)
	if err != nil {
		return "", fmt.Errorf("reading release %s from storage: %w", c.opts.Name, err)
	}
	rel, err := toV1(rls)
	if err != nil || rel == nil || rel.Info == nil || !rel.Info.Status.IsPending() {
		return "", err
	}
	stuck := rel.Info.Status
	rel.SetStatus(rcommon.StatusFailed, fmt.Sprintf("Release unlocked from stale '%s' state", stuck))
	if err := c.cfg.Releases.Update(rel); err != nil {
		return stuck, fmt.Errorf("unlocking release %s: %w", c.opts.Name, err)
	}
	return stuck, nil
}
