//! Teams: arithmetic progressions of world PEs (start, stride, size), spec 8.7.
//!
//! A team handle is a slot index in 0..ACLSHMEM_MAX_TEAMS (0 = the world team). Splitting is
//! collective over the parent team and the slot is agreed among the NEW team's members only: every
//! parent member publishes its bitmap of used slots through the parent team's exchange area, and the
//! new team takes the lowest slot free on all of its members. So PEs outside a team may create
//! other teams in between without breaking the agreement, and up to 2048 teams live at once. Each
//! slot owns a 2560-byte area of the sync pool (in the heap's extra region): barrier words on the
//! team's first PE, and an exchange area on every member.

use crate::error::{Error, Result};
use crate::instance::Instance;
use crate::sync;
use crate::team_table::{Bitmap, is_free, take};
pub use crate::team_table::{EXCHANGE_BYTES, EXCHANGE_OFFSET, SMALL_OFFSET, Team, Teams};
use aclshmem_abi::{ACLSHMEM_MAX_PES, ACLSHMEM_MAX_TEAMS, TeamConfig};

/// The subsets of the parent a split creates: (parent index of member 0, stride in parent indices,
/// size).
#[derive(Debug, Clone, Copy)]
struct Shape {
    start: usize,
    stride: usize,
    size: usize,
}

impl Shape {
    fn members(self) -> impl Iterator<Item = usize> {
        (0..self.size).map(move |k| self.start + k * self.stride)
    }
}

/// Agrees on slots for `shapes` (in order) among each shape's members, from every parent member's
/// bitmap; returns the slot of each shape. Deterministic: every parent member computes the same.
fn agree_slots(mut maps: Vec<Bitmap>, shapes: &[Shape]) -> Result<Vec<usize>> {
    let mut out = Vec::with_capacity(shapes.len());
    for s in shapes {
        let slot = (1..ACLSHMEM_MAX_TEAMS)
            .find(|&slot| s.members().all(|m| is_free(&maps[m], slot)))
            .ok_or_else(|| {
                Error::Inner(format!(
                    "no team slot is free on every member (limit {ACLSHMEM_MAX_TEAMS} live teams)"
                ))
            })?;
        for m in s.members() {
            take(&mut maps[m], slot);
        }
        out.push(slot);
    }
    Ok(out)
}

/// Teams other than the world team exist only in instance 0 (spec 8.7).
pub fn check_instance(inst: &Instance) -> Result<()> {
    if inst.id() != 0 {
        return Err(Error::NotSupported(format!(
            "teams are not available in instance {}",
            inst.id()
        )));
    }
    Ok(())
}

/// Collective over `parent`: every member publishes the split it asked for (`call` and its
/// arguments), its used-slot bitmap and the largest incarnation of a team it helped create. A
/// member that asked for another split makes the call fail on every member, naming the PEs whose
/// request differs from member 0's (a split agreed by only some members would leave the others
/// waiting for ever). Returns the bitmaps and the new teams' incarnation: one more than the
/// largest published, so the same on every member and larger than that of any team a member
/// took part in before (see `Teams`).
fn exchange_bitmaps(inst: &Instance, parent: &Team, call: &str, args: &[i32]) -> Result<(Vec<Bitmap>, u32)> {
    let (mut mine, created) = {
        let teams = inst.teams();
        (teams.bitmap().to_vec(), teams.created())
    };
    mine.extend_from_slice(&created.to_le_bytes());
    for a in args {
        mine.extend_from_slice(&a.to_le_bytes());
    }
    let parts = sync::exchange(inst, parent, &mine)?;
    let bitmap_len = ACLSHMEM_MAX_TEAMS / 8;
    let request = |p: &[u8]| -> Vec<i32> {
        p[bitmap_len + 4..]
            .chunks_exact(4)
            .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    };
    let first = request(&parts[0]);
    let differ: Vec<String> = parts
        .iter()
        .enumerate()
        .filter(|(_, p)| request(p) != first)
        .map(|(i, p)| format!("PE {} asked for {:?}", parent.world_pe(i), request(p)))
        .collect();
    if !differ.is_empty() {
        return Err(Error::InvalidParam(format!(
            "asymmetric {call}: every member of the parent team must pass the same arguments; PE {} asked for {:?}, {}",
            parent.world_pe(0),
            first,
            differ.join(", ")
        )));
    }
    let inc = new_incarnation(&parts, bitmap_len);
    inst.teams().saw_creation(inc);
    let maps = parts
        .into_iter()
        .map(|p| {
            p[..bitmap_len]
                .try_into()
                .map_err(|_| Error::Inner("bad slot bitmap".into()))
        })
        .collect::<Result<Vec<Bitmap>>>()?;
    Ok((maps, inc))
}

/// The incarnation of the teams a split creates: one more than the largest the parent's members
/// published (each after its `bitmap_len`-byte bitmap).
fn new_incarnation(parts: &[Vec<u8>], bitmap_len: usize) -> u32 {
    parts
        .iter()
        .map(|p| {
            p.get(bitmap_len..bitmap_len + 4)
                .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        })
        .max()
        .unwrap_or(0)
        .wrapping_add(1)
}

fn install(inst: &Instance, parent: &Team, shape: Shape, slot: usize, inc: u32) -> Option<usize> {
    let my = shape.members().position(|m| m == parent.my_index)?;
    let team = Team {
        slot,
        start: parent.world_pe(shape.start),
        stride: parent.stride * shape.stride,
        size: shape.size,
        my_index: my,
    };
    inst.teams().install(team, inc);
    sync::reset(inst, slot);
    crate::collectives::small::reset(inst, slot);
    crate::collectives::eager_reset(inst, slot);
    Some(slot)
}

/// A new team is usable once every member reset its per-slot state: barrier over it.
fn ready(inst: &Instance, slot: usize) -> Result<()> {
    let t = inst.teams().get(slot as i32)?;
    sync::barrier(inst, &t)
}

/// `aclshmem_team_split_strided`: returns the new handle for members, `None` for other PEs.
pub fn split_strided(
    inst: &Instance,
    parent: i32,
    start: i32,
    stride: i32,
    size: i32,
) -> Result<Option<usize>> {
    check_instance(inst)?;
    let parent = inst.teams().get(parent)?;
    // agreed first, so arguments that differ between members fail everywhere instead of hanging
    let (maps, inc) = exchange_bitmaps(inst, &parent, "split_strided", &[start, stride, size])?;
    let max = ACLSHMEM_MAX_PES as i32;
    if start >= max || stride >= max || size > max {
        return Err(Error::InvalidParam(format!(
            "pe_start {start}, pe_stride {stride} or pe_size {size} exceeds ACLSHMEM_MAX_PES"
        )));
    }
    if start < 0 || start as usize >= parent.size || size <= 0 || size as usize > parent.size || stride < 1 {
        return Err(Error::InvalidParam(format!(
            "pe_start {start}, pe_stride {stride}, pe_size {size} do not describe members of a team of {} PEs",
            parent.size
        )));
    }
    let shape = Shape {
        start: start as usize,
        stride: stride as usize,
        size: size as usize,
    };
    let last = shape.start + (shape.size - 1) * shape.stride;
    if last >= parent.size {
        return Err(Error::InvalidParam(format!(
            "the last member (index {last}) lies beyond the parent team of {} PEs",
            parent.size
        )));
    }
    let slot = agree_slots(maps, &[shape])?[0];
    let mine = install(inst, &parent, shape, slot, inc);
    if let Some(s) = mine {
        ready(inst, s)?;
    }
    Ok(mine)
}

/// `aclshmem_team_split_2d`: (x team, y team) of this PE.
pub fn split_2d(inst: &Instance, parent: i32, x_range: i32) -> Result<(usize, usize)> {
    check_instance(inst)?;
    let parent = inst.teams().get(parent)?;
    let (maps, inc) = exchange_bitmaps(inst, &parent, "split_2d", &[x_range])?;
    if x_range <= 0 {
        return Err(Error::InvalidParam(format!("x_range {x_range} must be positive")));
    }
    let n = parent.size;
    let x = (x_range as usize).min(n);
    let mut shapes = Vec::new();
    for start in (0..n).step_by(x) {
        shapes.push(Shape {
            start,
            stride: 1,
            size: x.min(n - start),
        });
    }
    let n_x = shapes.len();
    for start in 0..x {
        shapes.push(Shape {
            start,
            stride: x,
            size: (n - start).div_ceil(x),
        });
    }
    let slots = agree_slots(maps, &shapes)?;
    let me = parent.my_index;
    let xi = me / x;
    let yi = n_x + me % x;
    let xs = install(inst, &parent, shapes[xi], slots[xi], inc);
    let ys = install(inst, &parent, shapes[yi], slots[yi], inc);
    match (xs, ys) {
        (Some(a), Some(b)) => {
            ready(inst, a)?;
            ready(inst, b)?;
            Ok((a, b))
        }
        _ => Err(Error::Inner("this PE landed in no 2-D team".into())),
    }
}

/// `aclshmem_team_destroy`: local; first lets readers of this PE's small-collective buffers finish.
pub fn destroy(inst: &Instance, handle: i32) -> Result<()> {
    let t = {
        let teams = inst.teams();
        if handle == 0 {
            return Err(Error::InvalidParam(
                "ACLSHMEM_TEAM_WORLD cannot be destroyed".into(),
            ));
        }
        teams.get(handle)?
    };
    crate::collectives::small::drain(inst, &t)?;
    if inst.hierarchical() {
        // this PE's eager-broadcast pushes and credits land before it takes part in a later team
        // on the slot
        inst.routes().quiet()?;
    }
    inst.teams().destroy(handle)
}

/// `aclshmem_team_translate_pe`: index in `dest` of member `src_pe` of `src`, or -1.
pub fn translate(inst: &Instance, src: i32, src_pe: i32, dest: i32) -> i32 {
    if let Err(e) = check_instance(inst) {
        return e.code();
    }
    let teams = inst.teams();
    let (Ok(s), Ok(d)) = (teams.get(src), teams.get(dest)) else {
        return -1;
    };
    if src_pe < 0 || src_pe as usize >= s.size {
        return -1;
    }
    d.index_of(s.world_pe(src_pe as usize)).map_or(-1, |i| i as i32)
}

/// The (all-zero) configuration of a live team.
pub fn config(inst: &Instance, team: i32) -> Result<TeamConfig> {
    check_instance(inst)?;
    inst.teams().get(team)?;
    Ok(TeamConfig {
        version: 0,
        num_contexts: 0,
        uniqueid: 0,
        padding: [0; 48],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn membership() {
        let t = Team {
            slot: 1,
            start: 2,
            stride: 3,
            size: 3,
            my_index: 0,
        };
        assert_eq!(t.index_of(2), Some(0));
        assert_eq!(t.index_of(8), Some(2));
        assert_eq!(t.index_of(5), Some(1));
        assert_eq!(t.index_of(11), None);
        assert_eq!(t.index_of(4), None);
        assert_eq!(t.index_of(0), None);
    }

    #[test]
    fn incarnation_is_one_more_than_any_member_saw() {
        let part = |created: u32| {
            let mut p = vec![0u8; 4];
            p.extend_from_slice(&created.to_le_bytes());
            p.extend_from_slice(&7i32.to_le_bytes());
            p
        };
        assert_eq!(new_incarnation(&[part(0), part(0)], 4), 1);
        // a member that took part in more creations than the others raises everybody's
        assert_eq!(new_incarnation(&[part(3), part(9), part(1)], 4), 10);
        // every member computes it from the same parts: the same value
        let parts = [part(5), part(2)];
        assert_eq!(new_incarnation(&parts, 4), new_incarnation(&parts, 4));
    }

    #[test]
    fn slots_are_agreed_among_members_only() {
        // 4 parent members; member 1 already uses slot 1, member 3 uses slot 2
        let mut maps = vec![[0u8; ACLSHMEM_MAX_TEAMS / 8]; 4];
        for m in &mut maps {
            take(m, 0);
        }
        take(&mut maps[1], 1);
        take(&mut maps[3], 2);
        let even = Shape {
            start: 0,
            stride: 2,
            size: 2,
        }; // members 0, 2
        let odd = Shape {
            start: 1,
            stride: 2,
            size: 2,
        }; // members 1, 3
        assert_eq!(agree_slots(maps.clone(), &[even, odd]).unwrap(), vec![1, 3]);
        // once a member has every slot, no team including it can be created
        for s in 0..ACLSHMEM_MAX_TEAMS {
            take(&mut maps[0], s);
        }
        assert!(agree_slots(maps.clone(), &[even]).is_err());
        assert_eq!(agree_slots(maps, &[odd]).unwrap(), vec![3]);
    }

    #[test]
    fn world_cannot_be_destroyed_and_handles_are_checked() {
        let mut t = Teams::new(0, 4);
        assert!(t.destroy(0).is_err());
        assert!(t.destroy(5).is_err());
        assert!(t.get(-1).is_err());
        assert!(t.get(2048).is_err());
        assert_eq!(t.get(0).unwrap().size, 4);
        assert_eq!(t.live(), 1);
    }
}
