/** The profile calls of docs/api.md, typed. */
import { api } from '@/lib/api-client';
import type { Done, NewToken, ProfileImage, User } from '@/types/generated';

export interface ChangePasswordRequest {
  currentPassword: string;
  newPassword: string;
  confirmPassword: string;
}

export const profileApi = {
  /** Answers the whole updated user. */
  updateName: (name: string) => api.put<User>('/auth/profile', { name }),

  uploadImage: (file: File) => {
    const body = new FormData();
    body.append('image', file, file.name || 'image');
    return api.post<ProfileImage>('/auth/profile/image', body);
  },

  removeImage: () => api.delete<ProfileImage>('/auth/profile/image'),

  /** Revokes every token, this one included; the answer carries this tab's fresh token. */
  changePassword: (body: ChangePasswordRequest) => api.put<NewToken>('/auth/password', body),

  deleteAccount: () => api.delete<Done>('/auth/profile'),
};
