import { tabLocks } from "../tab-lock";

/** One tab at a time continues a conversation; the others follow it read-only (see tab-lock.ts). */
export const {
  announceSaved,
  announceDeleted,
  onNote,
  onAnyNote,
  deleteEverywhere,
  useTabLock: useConversationLock,
} = tabLocks("conversation");
