"""DWARF 2 to 5 numbers and layouts, declared once as data (DWARF 5, sections 7.5 to 7.22;
the GNU extensions as GCC writes them), as weaklink.read.elfstructs is ELF's.

The reader lives in weaklink.read.dwarf and the modules it names; this module only says what
the bytes mean.
"""
from __future__ import annotations

# Unit types (7.5.1) and the size of the header fields after the abbreviation offset and the
# address size: a skeleton or split unit adds its 8-byte id, a type unit its signature and the
# offset of its type (an offset: 4 or 8 bytes).
DW_UT_compile, DW_UT_type, DW_UT_partial = 0x01, 0x02, 0x03
DW_UT_skeleton, DW_UT_split_compile, DW_UT_split_type = 0x04, 0x05, 0x06

# Tags (7.5.3).
DW_TAG_class_type, DW_TAG_structure_type, DW_TAG_union_type = 0x02, 0x13, 0x17
DW_TAG_subprogram, DW_TAG_variable, DW_TAG_namespace = 0x2E, 0x34, 0x39
DW_TAG_call_site, DW_TAG_GNU_call_site = 0x48, 0x4109
CLASS_TAGS = frozenset({DW_TAG_class_type, DW_TAG_structure_type, DW_TAG_union_type})

# Attributes (7.5.4).
DW_AT_sibling, DW_AT_location, DW_AT_name = 0x01, 0x02, 0x03
DW_AT_stmt_list, DW_AT_low_pc, DW_AT_high_pc = 0x10, 0x11, 0x12
DW_AT_comp_dir, DW_AT_inline, DW_AT_abstract_origin = 0x1B, 0x20, 0x31
DW_AT_decl_column, DW_AT_decl_file, DW_AT_decl_line = 0x39, 0x3A, 0x3B
DW_AT_external, DW_AT_specification, DW_AT_ranges = 0x3F, 0x47, 0x55
DW_AT_object_pointer, DW_AT_linkage_name = 0x64, 0x6E
DW_AT_call_return_pc, DW_AT_call_value, DW_AT_call_origin = 0x7D, 0x7E, 0x7F
DW_AT_MIPS_linkage_name, DW_AT_GNU_call_site_value = 0x2007, 0x2111

# Forms (7.5.6).
DW_FORM_addr, DW_FORM_block2, DW_FORM_block4 = 0x01, 0x03, 0x04
DW_FORM_data2, DW_FORM_data4, DW_FORM_data8 = 0x05, 0x06, 0x07
DW_FORM_string, DW_FORM_block, DW_FORM_block1 = 0x08, 0x09, 0x0A
DW_FORM_data1, DW_FORM_flag, DW_FORM_sdata = 0x0B, 0x0C, 0x0D
DW_FORM_strp, DW_FORM_udata, DW_FORM_ref_addr = 0x0E, 0x0F, 0x10
DW_FORM_ref1, DW_FORM_ref2, DW_FORM_ref4, DW_FORM_ref8 = 0x11, 0x12, 0x13, 0x14
DW_FORM_ref_udata, DW_FORM_indirect, DW_FORM_sec_offset = 0x15, 0x16, 0x17
DW_FORM_exprloc, DW_FORM_flag_present, DW_FORM_strx = 0x18, 0x19, 0x1A
DW_FORM_addrx, DW_FORM_ref_sup4, DW_FORM_strp_sup = 0x1B, 0x1C, 0x1D
DW_FORM_data16, DW_FORM_line_strp, DW_FORM_ref_sig8 = 0x1E, 0x1F, 0x20
DW_FORM_implicit_const, DW_FORM_loclistx, DW_FORM_rnglistx = 0x21, 0x22, 0x23
DW_FORM_ref_sup8 = 0x24
DW_FORM_strx1, DW_FORM_strx2, DW_FORM_strx3, DW_FORM_strx4 = 0x25, 0x26, 0x27, 0x28
DW_FORM_addrx1, DW_FORM_addrx2, DW_FORM_addrx3, DW_FORM_addrx4 = 0x29, 0x2A, 0x2B, 0x2C

# The size of a form's value when it does not depend on the value: `fixed(offset_size)` for
# the 32-bit (4) and 64-bit (8) formats, whose offsets into other sections differ (7.4).
# DW_FORM_addr and DW_FORM_ref_addr (an address in DWARF 2) depend on the unit as well.
_FIXED = {
    DW_FORM_data2: 2, DW_FORM_data4: 4, DW_FORM_data8: 8, DW_FORM_data1: 1, DW_FORM_flag: 1,
    DW_FORM_ref1: 1, DW_FORM_ref2: 2, DW_FORM_ref4: 4, DW_FORM_ref8: 8, DW_FORM_ref_sup4: 4,
    DW_FORM_flag_present: 0, DW_FORM_data16: 16, DW_FORM_ref_sig8: 8,
    DW_FORM_implicit_const: 0, DW_FORM_ref_sup8: 8, DW_FORM_strx1: 1, DW_FORM_strx2: 2,
    DW_FORM_strx3: 3, DW_FORM_strx4: 4, DW_FORM_addrx1: 1, DW_FORM_addrx2: 2,
    DW_FORM_addrx3: 3, DW_FORM_addrx4: 4,
}
OFFSET_FORMS = (DW_FORM_strp, DW_FORM_sec_offset, DW_FORM_strp_sup, DW_FORM_line_strp)


def fixed(offset_size: int) -> dict[int, int]:
    return {**_FIXED, **dict.fromkeys(OFFSET_FORMS, offset_size)}


FIXED32, FIXED64 = fixed(4), fixed(8)
LEB_FORMS = frozenset({DW_FORM_sdata, DW_FORM_udata, DW_FORM_ref_udata, DW_FORM_strx,
                       DW_FORM_addrx, DW_FORM_loclistx, DW_FORM_rnglistx})
# Blocks: the size of their length field; None: a ULEB128.
BLOCKS = {DW_FORM_block2: 2, DW_FORM_block4: 4, DW_FORM_block: None, DW_FORM_block1: 1,
          DW_FORM_exprloc: None}
UNIT_REFS = {DW_FORM_ref1: 1, DW_FORM_ref2: 2, DW_FORM_ref4: 4, DW_FORM_ref8: 8}
CONSTANTS = {DW_FORM_data1: 1, DW_FORM_data2: 2, DW_FORM_data4: 4, DW_FORM_data8: 8,
             DW_FORM_flag: 1}

# DW_AT_inline values (7.10).
DW_INL_declared_not_inlined, DW_INL_declared_inlined = 2, 3

# Expression operations (7.7.1).
DW_OP_addr, DW_OP_const1u, DW_OP_const2u, DW_OP_const4u = 0x03, 0x08, 0x0A, 0x0C
DW_OP_constu, DW_OP_mul, DW_OP_or, DW_OP_plus, DW_OP_shl = 0x10, 0x1E, 0x21, 0x22, 0x24
DW_OP_lit0, DW_OP_lit31, DW_OP_reg0, DW_OP_reg31 = 0x30, 0x4F, 0x50, 0x6F

# Line-number program (7.22): standard and extended opcodes, DWARF 5 entry formats.
DW_LNS_copy, DW_LNS_advance_pc, DW_LNS_advance_line, DW_LNS_set_file = 1, 2, 3, 4
DW_LNS_const_add_pc, DW_LNS_fixed_advance_pc = 8, 9
DW_LNE_end_sequence, DW_LNE_set_address = 1, 2
DW_LNCT_path, DW_LNCT_directory_index = 1, 2

# Range list entries (7.25, DWARF 5 .debug_rnglists) that hold addresses, not indexes into
# .debug_addr; 0 ends a list.
DW_RLE_offset_pair, DW_RLE_base_address, DW_RLE_start_end, DW_RLE_start_length = 4, 5, 6, 7
