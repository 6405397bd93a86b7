//! The sequence space the recovery parts read of the sender.

/// The sequence space a part reads (bytes): what is outstanding and where the application's data ends.
#[derive(Clone, Copy, Debug)]
pub struct Outstanding {
    pub snd_una: u64,
    pub snd_max: u64,
    /// Where the application's data ends (`u64::MAX` while backlogged); the last segment may be short.
    pub app_end: u64,
}

impl Outstanding {
    /// The length of the segment at `seq` (the machine's segments: MSS-sized, the last one cut).
    #[inline]
    pub fn seg_len(&self, seq: u64, mss: u64) -> u64 {
        mss.min(self.app_end.saturating_sub(seq))
    }

    /// RFC 5681 FlightSize.
    #[inline]
    pub fn flight(&self) -> u64 {
        self.snd_max - self.snd_una
    }
}
