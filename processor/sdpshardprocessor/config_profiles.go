// SPDX-License-Identifier: Apache-2.0

package sdpshardprocessor

import "fmt"

// ProfilesDictionary says what a profiles frame carries of the dictionary
// its request's resources share.
type ProfilesDictionary string

const (
	// ProfilesDictionaryWhole sends the whole dictionary with every
	// resource: the least CPU in the gateway, the most bytes to the
	// sidecars (a request of N resources becomes N copies of it).
	ProfilesDictionaryWhole ProfilesDictionary = "whole"
	// ProfilesDictionaryPruned sends each resource with the dictionary
	// pruned to what it references (otlpwire.AppendRequestPruned): indices
	// keep their meaning, unreferenced entries are emptied in place, and no
	// sample is re-encoded. A resource that needs several frames is split
	// with the whole dictionary.
	ProfilesDictionaryPruned ProfilesDictionary = "pruned"
)

func (d ProfilesDictionary) validate() []error {
	switch d {
	case ProfilesDictionaryWhole, ProfilesDictionaryPruned:
		return nil
	}
	return []error{fmt.Errorf(`profiles_dictionary: unknown value %q, want "whole" or "pruned"`, d)}
}
