package smbmappings

import "time"

// SetNow replaces the Service's clock, so that tests can age mappings.
func (s *Service) SetNow(now func() time.Time) { s.now = now }
