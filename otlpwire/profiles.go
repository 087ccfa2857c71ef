// SPDX-License-Identifier: Apache-2.0

package otlpwire

// The profiles signal. A request (ExportProfilesServiceRequest, or
// ProfilesData, which shares the layout) holds its ResourceProfiles in field
// 1, like the other signals, and in field 2 a ProfilesDictionary shared by
// all of them: its tables (mappings, locations, functions, links, strings,
// attributes, stacks) are what samples reference by index. A resource taken
// out of its request is only meaningful with that dictionary, so every
// ResourceData a profiles Request yields carries it, and AppendRequest,
// RequestSize and SplitResource put it in every request they build.

// NewProfilesResourceData returns a view of b, the encoding of one
// ResourceProfiles message, whose samples reference dictionary, the
// encoding of one ProfilesDictionary message (both without tag and length).
// A nil or empty dictionary stands for none.
func NewProfilesResourceData(b, dictionary []byte) ResourceData {
	return ResourceData{sig: SignalProfiles, b: b, dict: dictionary}
}

// ProfileCount returns the number of profiles in a profiles request, after
// the validation ItemCount does. On a request of another signal it returns
// ErrWrongSignal.
func (r Request) ProfileCount() (int, error) {
	if r.sig != SignalProfiles {
		return 0, signalError(r.sig)
	}
	rd := newReader(r.b, &schemaProfilesRequest)
	total := 0
	for {
		num, err := rd.nextField()
		if err != nil {
			return 0, err
		}
		switch num {
		case 0:
			return total, nil
		case fieldRequestEntries:
			_, n, err := countResourceProfiles(rd.data)
			if err != nil {
				return 0, err
			}
			total += n
		case fieldProfilesDictionary:
			if err := validate(rd.data, &schemaDictionary); err != nil {
				return 0, err
			}
		}
	}
}

// ProfileCount returns the number of profiles under a ResourceProfiles,
// after the validation ItemCount does. On a resource of another signal it
// returns ErrWrongSignal.
func (d ResourceData) ProfileCount() (int, error) {
	if d.sig != SignalProfiles {
		return 0, signalError(d.sig)
	}
	_, n, err := countResourceProfiles(d.b)
	return n, err
}

// ProfileCount returns the number of profiles in a ScopeProfiles. On a
// scope of another signal it returns ErrWrongSignal.
func (s ScopeData) ProfileCount() (int, error) {
	if s.sig != SignalProfiles {
		return 0, signalError(s.sig)
	}
	_, n, err := countScopeProfiles(s.b)
	return n, err
}

func signalError(sig Signal) error {
	if !sig.Valid() {
		return ErrUnknownSignal
	}
	return ErrWrongSignal
}

// countResourceProfiles returns the samples and profiles of a
// ResourceProfiles. The layout has no deprecated scope field.
func countResourceProfiles(b []byte) (samples, profiles int, err error) {
	rd := newReader(b, &schemaResourceProfiles)
	for {
		num, err := rd.nextField()
		if err != nil {
			return 0, 0, err
		}
		if num == 0 {
			return samples, profiles, nil
		}
		if num == fieldScopes {
			s, p, err := countScopeProfiles(rd.data)
			if err != nil {
				return 0, 0, err
			}
			samples += s
			profiles += p
		}
	}
}

// countScopeProfiles returns the samples and profiles of a ScopeProfiles.
func countScopeProfiles(b []byte) (samples, profiles int, err error) {
	rd := newReader(b, &schemaScopeProfiles)
	for {
		num, err := rd.nextField()
		if err != nil {
			return 0, 0, err
		}
		if num == 0 {
			return samples, profiles, nil
		}
		if num == fieldItems {
			n, err := countProfile(rd.data)
			if err != nil {
				return 0, 0, err
			}
			samples += n
			profiles++
		}
	}
}

// countProfile returns the samples of a Profile. The first sample is
// validated against the pinned layout, which is where the releases before
// it differ (v1.9.0 numbered the sample's fields otherwise); the others are
// skipped by tag and length, as countField skips spans.
func countProfile(b []byte) (int, error) {
	const tag = fieldProfileSamples<<3 | wireLen
	rd := newReader(b, &schemaProfile)
	n := 0
	for {
		if n > 0 {
			pos, k := skipLenRun(b, rd.pos, tag)
			rd.pos = pos
			n += k
		}
		num, err := rd.nextField()
		if err != nil {
			return 0, err
		}
		if num == 0 {
			return n, nil
		}
		if num == fieldProfileSamples {
			if n == 0 {
				if err := validate(rd.data, &schemaSample); err != nil {
					return 0, err
				}
			}
			n++
		}
	}
}

// profileResources yields the ResourceProfiles of a profiles request, each
// with the request's dictionary, which is located first (it may follow the
// resources: pdata writes it first, but the order is free).
func (r Request) profileResources(yield func(ResourceData, error) bool) {
	dict, span, err := findDictionary(r.b)
	if err != nil {
		yield(ResourceData{}, err)
		return
	}
	pos := 0
	for {
		if data, next, ok := resourceEntry(r.b, pos); ok {
			pos = next
			if !yield(ResourceData{sig: SignalProfiles, span: span, b: data, dict: dict}, nil) {
				return
			}
			continue
		}
		if pos == len(r.b) {
			return
		}
		rd := newReader(r.b, &schemaProfilesRequest)
		rd.pos = pos
		num, _ := rd.nextField() // validated by findDictionary
		pos = rd.pos
		if num == fieldRequestEntries &&
			!yield(ResourceData{sig: SignalProfiles, span: span, b: rd.data, dict: dict}, nil) {
			return
		}
	}
}

// findDictionary walks the top level of a profiles request and returns its
// dictionary: the payload of its only dictionary field, or, when the field
// occurs several times (protobuf then concatenates the tables), the run of
// fields from the first to the last, with span set. It validates the top
// level of the dictionary (its tables' framing, and that it has no field
// the pinned layout lacks), which every request built for a resource
// copies.
func findDictionary(b []byte) (dict []byte, span bool, err error) {
	rd := newReader(b, &schemaProfilesRequest)
	first, end, n := 0, 0, 0
	for {
		num, err := rd.nextField()
		if err != nil {
			return nil, false, err
		}
		if num == 0 {
			break
		}
		if num == fieldProfilesDictionary {
			if err := validate(rd.data, &schemaDictionary); err != nil {
				return nil, false, err
			}
			if n == 0 {
				first = rd.start
				dict = rd.data
			}
			end = rd.pos
			n++
		}
	}
	if n > 1 {
		return b[first:end:end], true, nil
	}
	return dict, false, nil
}

// dictionarySize returns the size of the dictionary fields AppendDictionary
// writes for d.
func dictionarySize(d ResourceData) int {
	if len(d.dict) == 0 {
		return 0
	}
	if !d.span {
		return envelopeSize(len(d.dict))
	}
	n := 0
	rd := newReader(d.dict, &schemaProfilesRequest)
	for {
		num, _ := rd.nextField() // validated by findDictionary
		if num == 0 {
			return n
		}
		if num == fieldProfilesDictionary {
			n += rd.pos - rd.start
		}
	}
}

// AppendDictionary appends to dst the dictionary field of the profiles
// request d was read from (nothing for another signal, or for a resource
// without a dictionary) and returns the extended slice. With AppendResource
// it builds one request holding several resources of the same request:
// append each resource, then the dictionary once. (Appending the dictionary
// twice would concatenate its tables and shift every index into them.)
func AppendDictionary(dst []byte, d ResourceData) []byte {
	if len(d.dict) == 0 {
		return dst
	}
	if !d.span {
		dst = append(dst, fieldProfilesDictionary<<3|wireLen)
		dst = appendVarint(dst, uint64(len(d.dict)))
		return append(dst, d.dict...)
	}
	rd := newReader(d.dict, &schemaProfilesRequest)
	for {
		num, _ := rd.nextField() // validated by findDictionary
		if num == 0 {
			return dst
		}
		if num == fieldProfilesDictionary {
			dst = append(dst, d.dict[rd.start:rd.pos]...)
		}
	}
}
