import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { BoardInfo, OwnProfile } from './api-types.js';

/** What every view may need: the board's own information and who is reading. */
export interface BoardState {
  readonly info: BoardInfo | null;
  readonly user: OwnProfile | null;
}

export const BoardContext = createContext<BoardState>({ info: null, user: null });

export function useBoard(): BoardState {
  return useContext(BoardContext);
}
